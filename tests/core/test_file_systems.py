"""Which file system a folder is on, read from the kernel's mount table as Linux writes it."""

from __future__ import annotations

from pathlib import Path

from core.file_systems import NETWORK_TYPES, mounted_type

# /proc/self/mountinfo as a university's Linux desktop has it: the root on a local disk, home on NFS,
# a folder with a space in its name on sshfs.
MOUNTINFO = """\
22 27 0:21 / /proc rw,relatime - proc proc rw
27 1 8:2 / / rw,relatime shared:1 - ext4 /dev/sda2 rw,errors=remount-ro
41 27 0:44 / /home rw,relatime shared:20 - nfs4 fs.example.edu:/export/home rw,vers=4.2
48 41 0:51 / /home/ada/work\\040shared rw,nosuid - fuse.sshfs ada@lab:/srv rw,user_id=1000
52 27 8:3 / /home-local rw,relatime - ext4 /dev/sda3 rw
"""


def test_a_folder_is_on_the_file_system_of_the_longest_mount_point_that_holds_it():
    assert mounted_type(Path("/home/ada/.local/share/tripane"), MOUNTINFO) == "nfs4"
    assert mounted_type(Path("/home/ada/work shared/data"), MOUNTINFO) == "fuse.sshfs"
    assert mounted_type(Path("/home-local/ada/tripane"), MOUNTINFO) == "ext4"  # not /home's, whose name it begins with
    assert mounted_type(Path("/var/lib/tripane"), MOUNTINFO) == "ext4"
    assert {"nfs4", "fuse.sshfs"} <= NETWORK_TYPES and "ext4" not in NETWORK_TYPES


def test_a_table_without_the_folder_names_no_type():
    assert mounted_type(Path("/home/ada"), "22 27 0:21 / /proc rw,relatime - proc proc rw\nbroken line\n") == ""


def test_a_windows_share_is_known_by_its_path():
    from core.file_systems import _windows_share

    assert _windows_share(Path("\\\\fileserver\\home\\ada\\AppData\\Local\\Tripane")) == "a network share"
    assert _windows_share(Path("//fileserver/home/ada")) == "a network share"
    assert _windows_share(Path("\\\\?\\C:\\Users\\ada")) is None  # a long local path, not a share
