#!/usr/bin/env bash
# Build the Linux bundle from a clean clone: dist/Tripane/ (a folder) and dist/Tripane-VERSION-linux-x86_64.tar.gz,
# then run the bundle's --selftest and print its size and cold start time.
#   installer/build-linux.sh
set -euo pipefail
export LITELLM_LOCAL_MODEL_COST_MAP=True  # PyInstaller imports litellm while analysing; no network fetch
cd "$(dirname "$0")/.."
python3 -m venv .build/venv
. .build/venv/bin/activate
python -m pip install -q --upgrade pip
python -m pip install -q . "pyinstaller>=6.10"
rm -rf build dist
pyinstaller --noconfirm --clean --log-level WARN --distpath dist --workpath .build/work installer/tripane.spec
version=$(python -c "import tomllib; print(tomllib.load(open('pyproject.toml','rb'))['project']['version'])")
start=$(date +%s.%N)
QT_QPA_PLATFORM=offscreen dist/Tripane/tripane --selftest
end=$(date +%s.%N)
# A menu entry and icon for desktops: copy tripane.desktop to ~/.local/share/applications and put
# Tripane/ on the PATH (or edit Exec= to its full path).
cp installer/tripane.desktop installer/tripane.png dist/Tripane/
tar -C dist -czf "dist/Tripane-${version}-linux-$(uname -m).tar.gz" Tripane
echo "bundle: $(du -sh dist/Tripane | cut -f1) unpacked, $(du -sh dist/Tripane-*.tar.gz | cut -f1) as tar.gz"
echo "selftest (cold, including the scripted task): $(python -c "print(round($end - $start, 2))") s"
