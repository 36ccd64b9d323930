# Build dist\Tripane\ and, with Inno Setup installed, dist\Tripane-VERSION-setup.exe; then --selftest.
#   powershell -ExecutionPolicy Bypass -File installer\build-windows.ps1
$ErrorActionPreference = "Stop"
$env:LITELLM_LOCAL_MODEL_COST_MAP = "True"  # PyInstaller imports litellm while analysing; no network fetch
Set-Location (Join-Path $PSScriptRoot "..")
python -m venv .build\venv
. .build\venv\Scripts\Activate.ps1
python -m pip install -q --upgrade pip
python -m pip install -q . "pyinstaller>=6.10" pillow  # Pillow turns the PNG icon into .ico
if (Test-Path dist) { Remove-Item -Recurse -Force dist }
pyinstaller --noconfirm --clean --log-level WARN --distpath dist --workpath .build\work installer\tripane.spec
$version = python -c "import tomllib; print(tomllib.load(open('pyproject.toml','rb'))['project']['version'])"
$env:QT_QPA_PLATFORM = "offscreen"
$selftest = Start-Process -FilePath dist\Tripane\tripane.exe -ArgumentList "--selftest" -Wait -PassThru -NoNewWindow
if ($selftest.ExitCode -ne 0) { throw "selftest failed ($($selftest.ExitCode))" }
Remove-Item Env:\QT_QPA_PLATFORM
$iscc = Get-Command iscc -ErrorAction SilentlyContinue
if ($iscc) {
    & $iscc.Source "/DAppVersion=$version" installer\windows.iss
} else {
    Write-Host "Inno Setup (iscc) not found: dist\Tripane\ is the portable build; install Inno Setup for the installer."
}
