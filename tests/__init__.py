"""rpt tests: C++ suites (GoogleTest, via CMake) and Python tests (python3 -m unittest)."""
