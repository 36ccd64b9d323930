; Inno Setup script for the Windows installer: iscc /DAppVersion=X.Y.Z installer\windows.iss
#ifndef AppVersion
  #define AppVersion "0.0.0"
#endif

[Setup]
AppId={{6B1E3C52-5F0A-4E8B-9C7D-2A1F3E4B5C6D}
AppName=Tripane
AppVersion={#AppVersion}
AppPublisher=Tripane
DefaultDirName={autopf}\Tripane
DefaultGroupName=Tripane
OutputDir=..\dist
OutputBaseFilename=Tripane-{#AppVersion}-setup
Compression=lzma2
SolidCompression=yes
PrivilegesRequired=lowest
WizardStyle=modern

[Files]
Source: "..\dist\Tripane\*"; DestDir: "{app}"; Flags: recursesubdirs ignoreversion

[Icons]
Name: "{group}\Tripane"; Filename: "{app}\tripane.exe"
Name: "{autodesktop}\Tripane"; Filename: "{app}\tripane.exe"; Tasks: desktopicon

[Tasks]
Name: "desktopicon"; Description: "Create a desktop shortcut"; Flags: unchecked

[Run]
Filename: "{app}\tripane.exe"; Description: "Start Tripane"; Flags: nowait postinstall skipifsilent
