#!/usr/bin/env sh
# Install Debian packages when the programs they provide are missing.
#
#   ensure_debian_packages.sh "PROGRAM..." PACKAGE...
#
# make run needs graphviz (dot); make test also needs chromium and
# chromium-driver (the exported HTML stepper is tested in a headless browser)
# and tmux (the viewer is tested in real terminals).
set -e
programs=$1
shift
missing=""
for program in $programs; do
    command -v "$program" >/dev/null 2>&1 || missing="$missing $program"
done
if [ -z "$missing" ]; then
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "gradview:$missing missing and apt-get is not available; install $* by hand." >&2
    exit 1
fi
SUDO=""
if [ "$(id -u)" != "0" ]; then
    SUDO="sudo"
fi
echo "gradview: installing Debian's $* for$missing..."
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$@" >/dev/null
