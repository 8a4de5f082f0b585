#!/usr/bin/env bash
# Make sure a Chromium is available for static (PNG/SVG) figure export. Installs Debian's `chromium` package when it
# is missing and we are root with apt-get; otherwise prints one line saying how. Never fails: HTML export needs no
# browser, so the caller carries on either way.
set -u
for b in "${BROWSER_PATH:-}" chromium chromium-browser google-chrome google-chrome-stable; do
  [ -n "$b" ] && command -v "$b" >/dev/null 2>&1 && exit 0
done
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "workbench: installing Debian chromium for static figure export (one time)..."
  log=$(mktemp)
  if (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium) >"$log" 2>&1; then
    echo "workbench: chromium installed at $(command -v chromium)"
  else
    echo "workbench: could not install chromium (see $log); static export will be skipped, HTML still written."
  fi
else
  echo "workbench: no Chromium found; PNG/SVG export will be skipped (HTML still written). Install it with: sudo apt-get install -y chromium"
fi
exit 0
