#!/usr/bin/env sh
# Install Debian's graphviz (the `dot` program) when it is missing.
set -e
if command -v dot >/dev/null 2>&1; then
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "gradview: 'dot' (Graphviz) is missing and apt-get is not available; install Graphviz by hand." >&2
    exit 1
fi
SUDO=""
if [ "$(id -u)" != "0" ]; then
    SUDO="sudo"
fi
echo "gradview: installing Debian's graphviz for 'dot'..."
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq graphviz >/dev/null
