#!/usr/bin/env sh
# Install Debian's Chromium and ChromeDriver when missing: the tests open the
# exported HTML stepper in a real headless browser.
set -e
if command -v chromium >/dev/null 2>&1 && command -v chromedriver >/dev/null 2>&1; then
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "gradview: chromium and chromedriver are missing and apt-get is not available; install them by hand." >&2
    exit 1
fi
SUDO=""
if [ "$(id -u)" != "0" ]; then
    SUDO="sudo"
fi
echo "gradview: installing Debian's chromium and chromium-driver for the browser tests..."
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium chromium-driver >/dev/null
