#!/usr/bin/env bash
# Makes the Debian 12 base image the Dockerfile builds on, from Debian's own archive
# (debootstrap --variant=minbase bookworm, then `podman import`), for machines that have
# Debian's mirror but no container registry. Prints the image's name. Reuses it when present.
# The sources match the official debian:12 images: bookworm, bookworm-updates, bookworm-security.
#   bash deploy/image/base-image.sh [MIRROR]
set -euo pipefail
export CONTAINERS_CONF="$(cd "$(dirname "$0")" && pwd)/containers.conf"
image=localhost/rpt-debian:bookworm
mirror=${1:-http://deb.debian.org/debian}
if podman image exists "$image"; then
  echo "$image"
  exit 0
fi
rootfs=$(mktemp -d)
trap 'rm -rf "$rootfs"' EXIT
debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >&2
cat > "$rootfs/etc/apt/sources.list" <<SOURCES
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb ${mirror%/debian}/debian-security bookworm-security main
SOURCES
rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
tar -C "$rootfs" -c . | podman import --change 'CMD ["bash"]' - "$image" >&2
echo "$image"
