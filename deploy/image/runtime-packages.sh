#!/usr/bin/env bash
# The Debian packages that hold every shared library the given binaries load (ldd, resolved on
# the build machine), one per line: the Dockerfile's runtime stage installs exactly these.
# Fails when a library is unresolved or belongs to no package.
#   bash deploy/image/runtime-packages.sh /opt/rpt/bin/*
set -euo pipefail
libraries=$(ldd "$@" | awk '/=> not found/ {print "MISSING " $1; next}
                            $2 == "=>" && $3 ~ /^\// {print $3}' | sort -u)
if grep MISSING <<<"$libraries" >&2; then
  echo "runtime-packages: unresolved libraries above" >&2
  exit 1
fi
for library in $libraries; do
  # dpkg knows a file by the path its package ships (/lib or /usr/lib on a merged /usr).
  owner=""
  for path in "$library" "$(readlink -f "$library")" "/usr${library#/usr}" "${library#/usr}"; do
    owner=$(dpkg-query -S "$path" 2>/dev/null | grep -v '^diversion' | head -1 | cut -d: -f1) \
      && [ -n "$owner" ] && break
  done
  if [ -z "$owner" ]; then
    echo "runtime-packages: no Debian package holds $library" >&2
    exit 1
  fi
  echo "$owner"
done | sort -u
