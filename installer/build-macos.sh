#!/usr/bin/env bash
# Build dist/Tripane.app and dist/Tripane-VERSION-macos.dmg on macOS, then run the app's --selftest.
#   installer/build-macos.sh
set -euo pipefail
export LITELLM_LOCAL_MODEL_COST_MAP=True  # PyInstaller imports litellm while analysing; no network fetch
cd "$(dirname "$0")/.."
python3 -m venv .build/venv
. .build/venv/bin/activate
python -m pip install -q --upgrade pip
python -m pip install -q . "pyinstaller>=6.10" pillow  # Pillow turns the PNG icon into .icns
rm -rf dist
pyinstaller --noconfirm --clean --log-level WARN --distpath dist --workpath .build/work installer/tripane.spec
version=$(python -c "import tomllib; print(tomllib.load(open('pyproject.toml','rb'))['project']['version'])")
QT_QPA_PLATFORM=offscreen dist/Tripane.app/Contents/MacOS/tripane --selftest
hdiutil create -volname Tripane -srcfolder dist/Tripane.app -ov -format UDZO "dist/Tripane-${version}-macos.dmg"
echo "bundle: $(du -sh dist/Tripane.app | cut -f1), dmg: $(du -sh dist/Tripane-*.dmg | cut -f1)"
