// The engine's error types, for its users (the server catches these). They are defined with the
// kernels, the lowest layer, so that kernels can throw them too.
#pragma once

#include "kernels/errors.h"
