#!/usr/bin/env bash
# Optional Debian packages: extra TTS voices (espeak-ng, flite), sox, real speech and sound effects
# for noise; chromium (browser tests and screenshots of the rater app, viewer and report, driven
# by Playwright through its executable path) and postgresql (the index and rater database by
# URL; tests start a throwaway cluster). voxeval works without them; `voxeval doctor` says what
# is missing and the tests that need them skip with a message.
set -u
PKGS="espeak-ng flite sox libsox-fmt-all asterisk-core-sounds-en-wav sound-theme-freedesktop bucklespring-data chromium fonts-dejavu-core postgresql"
if ! command -v apt-get >/dev/null 2>&1; then
  echo "[system-packages] apt-get not found; skipping optional packages: $PKGS"; exit 0
fi
missing=""
for p in $PKGS; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -z "$missing" ]; then echo "[system-packages] all optional packages present"; exit 0; fi
SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo -n"
echo "[system-packages] installing:$missing"
if ! $SUDO apt-get update -q >/dev/null 2>&1; then
  echo "[system-packages] apt-get update failed (no root or no network); skipping:$missing"; exit 0
fi
for p in $missing; do
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "$p" >/dev/null 2>&1 \
    && echo "[system-packages] installed $p" || echo "[system-packages] could not install $p; skipping"
done
exit 0
