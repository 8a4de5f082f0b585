#!/usr/bin/env bash
# Make sure a Chromium is available for static (PNG/SVG) figure export and the browser tests. As root with apt-get,
# installs what is missing of Debian's `chromium` and `chromium-headless-shell` (the same engine without the full
# browser's window and GPU processes: what `workbench.viz.export.chromium_path` prefers, a third of the CPU per page);
# otherwise prints one line saying how. Never fails: HTML export needs no browser, and either package alone is enough,
# so the caller carries on either way.
set -u
have() { [ -n "$1" ] && command -v "$1" >/dev/null 2>&1; }
missing=()
have chromium-headless-shell || missing+=(chromium-headless-shell)
if ! have "${BROWSER_PATH:-}" && ! have chromium && ! have chromium-browser && ! have google-chrome \
  && ! have google-chrome-stable; then
  missing+=(chromium)
fi
[ ${#missing[@]} -eq 0 ] && exit 0
if [ -n "${BROWSER_PATH:-}" ] && have "$BROWSER_PATH"; then
  exit 0  # the user chose a browser: nothing to install
fi
if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  echo "workbench: installing Debian ${missing[*]} for the browser tests and static figure export (one time)..."
  log=$(mktemp)
  apt-get update -qq >"$log" 2>&1
  for pkg in "${missing[@]}"; do
    if DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$pkg" >>"$log" 2>&1; then
      echo "workbench: $pkg installed"
    else
      echo "workbench: could not install $pkg (see $log)"
    fi
  done
  if ! have chromium-headless-shell && ! have chromium; then
    echo "workbench: no Chromium; static export will be skipped, HTML still written."
  fi
else
  if have chromium || have chromium-browser || have google-chrome || have google-chrome-stable; then
    exit 0  # a full browser is enough; the headless shell only makes the browser tests cheaper
  fi
  echo "workbench: no Chromium found; PNG/SVG export will be skipped (HTML still written). Install it with: sudo apt-get install -y chromium-headless-shell chromium"
fi
exit 0
