#!/usr/bin/env bash
# Installs what the benchmark needs besides Partita itself. Idempotent: a second
# run only checks that everything is in place.
#
#   wrk                      load generator (Debian package)
#   bench/.peers/moto-venv   moto's server (moto_server), in its own venv
#   bench/.peers/dynalite    dynalite (npm), run with the system node (>= 20)
set -euo pipefail

MOTO_VERSION="5.2.5"
DYNALITE_VERSION="4.0.0"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
peers="$here/.peers"
mkdir -p "$peers"

# --- wrk -------------------------------------------------------------------
if ! command -v wrk >/dev/null 2>&1; then
    sudo_cmd=""
    if [ "$(id -u)" -ne 0 ]; then sudo_cmd="sudo"; fi
    if ! $sudo_cmd apt-get install -y wrk; then
        $sudo_cmd apt-get update
        $sudo_cmd apt-get install -y wrk
    fi
fi
echo "wrk: $(command -v wrk)"

# --- moto ------------------------------------------------------------------
moto_venv="$peers/moto-venv"
python_bin="${PYTHON:-python3}"
if [ ! -x "$moto_venv/bin/python" ]; then
    "$python_bin" -m venv "$moto_venv"
fi
installed_moto="$("$moto_venv/bin/python" -c 'import importlib.metadata as m; print(m.version("moto"))' 2>/dev/null || true)"
if [ "$installed_moto" != "$MOTO_VERSION" ] || [ ! -x "$moto_venv/bin/moto_server" ]; then
    "$moto_venv/bin/pip" install --quiet --upgrade pip
    "$moto_venv/bin/pip" install --quiet "moto[server]==$MOTO_VERSION"
fi
echo "moto: $("$moto_venv/bin/python" -c 'import importlib.metadata as m; print(m.version("moto"))') ($moto_venv/bin/moto_server)"

# --- dynalite --------------------------------------------------------------
if ! command -v node >/dev/null 2>&1; then
    echo "node is required for dynalite (>= 20)" >&2
    exit 1
fi
node_major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$node_major" -lt 20 ]; then
    echo "dynalite $DYNALITE_VERSION needs node >= 20, found $(node --version)" >&2
    exit 1
fi
dyn_dir="$peers/dynalite"
dyn_pkg="$dyn_dir/node_modules/dynalite/package.json"
installed_dyn=""
if [ -f "$dyn_pkg" ]; then
    installed_dyn="$(node -p "require('$dyn_pkg').version")"
fi
if [ "$installed_dyn" != "$DYNALITE_VERSION" ]; then
    mkdir -p "$dyn_dir"
    [ -f "$dyn_dir/package.json" ] || echo '{"name": "partita-bench-peers", "private": true}' > "$dyn_dir/package.json"
    (cd "$dyn_dir" && npm install --no-audit --no-fund --silent "dynalite@$DYNALITE_VERSION")
fi
echo "dynalite: $(node -p "require('$dyn_pkg').version") (node $(node --version))"
