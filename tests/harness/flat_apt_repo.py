#!/usr/bin/env python3
"""Index a flat apt repository (sources line `deb URL ./`): Packages, Packages.gz, Release.

    flat_apt_repo.py DIR [--origin ORIGIN] [--label LABEL] [--description TEXT]

Every *.deb in DIR is listed with its control fields (read with dpkg-deb) plus Filename,
Size, MD5sum and SHA256, as apt-ftparchive writes them. Release carries the MD5Sum and
SHA256 of both index files. Signing (InRelease, Release.gpg) is left to gpg. Test images
carry dpkg but not apt-ftparchive or dpkg-scanpackages: this is the small part of them
a test repository needs.
"""

import argparse
import email.utils
import gzip
import hashlib
import pathlib
import subprocess
import sys


def digests(data):
    return {"MD5": hashlib.md5(data).hexdigest(), "SHA256": hashlib.sha256(data).hexdigest()}


def package_stanza(deb):
    control = subprocess.run(
        ["dpkg-deb", "--field", str(deb)], check=True, capture_output=True, text=True
    ).stdout
    data = deb.read_bytes()
    sums = digests(data)
    fields = {
        "Filename": f"./{deb.name}",
        "Size": len(data),
        "MD5sum": sums["MD5"],
        "SHA256": sums["SHA256"],
    }
    extra = "".join(f"{key}: {value}\n" for key, value in fields.items())
    return control.rstrip("\n") + "\n" + extra


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", type=pathlib.Path)
    parser.add_argument("--origin")
    parser.add_argument("--label")
    parser.add_argument("--description")
    args = parser.parse_args()

    debs = sorted(args.directory.glob("*.deb"))
    if not debs:
        sys.exit(f"no .deb files in {args.directory}")
    packages = "\n".join(package_stanza(deb) for deb in debs).encode()
    indexes = {"Packages": packages, "Packages.gz": gzip.compress(packages, mtime=0)}

    release = []
    for field, value in (("Origin", args.origin), ("Label", args.label)):
        if value:
            release.append(f"{field}: {value}")
    release.append(f"Date: {email.utils.formatdate(usegmt=True)}")
    if args.description:
        release.append(f"Description: {args.description}")
    for algorithm, field in (("MD5", "MD5Sum"), ("SHA256", "SHA256")):
        release.append(f"{field}:")
        for name, data in indexes.items():
            release.append(f" {digests(data)[algorithm]} {len(data):>8} {name}")

    for name, data in indexes.items():
        (args.directory / name).write_bytes(data)
    (args.directory / "Release").write_text("\n".join(release) + "\n")
    print(f"indexed {len(debs)} packages in {args.directory}")


if __name__ == "__main__":
    main()
