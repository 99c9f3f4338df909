"""A stand-in for ConnectX flash firmware and the mstflint/flint command line.

STAND-IN, NOT THE REAL THING: no test world here has a ConnectX NIC nor a real firmware
image (NVIDIA's images cannot be downloaded here). This class answers the argument lists
rdma.fabric.nic_firmware runs the way mstflint documents and prints them:

- ``TOOL -d DEV query``: the query layout of mstflint's QuerySubCommand::printInfo (FS4:
  Image type, FW Version, "FW Version(Running)" only while the running firmware differs
  from the flash, FW Release Date, Product Version, Rom Info, the UID table, Image/Device
  VSD, PSID, Security Attributes; FS2 for ConnectX-3: Device ID, GUIDs/MACs, VSD, PSID).
- ``TOOL -i FILE query``: the same layout for an image file. An image here is a small
  text file written by write_image() (its first line a marker, then psid/version); a
  file without the marker answers as real mstflint 4.21 does for a file of random bytes
  ('-E- Failed to query image: FILE. No valid image found', exit 1), a missing file as
  it does for a missing one ('-E- Cannot open Image: FILE. Can not open file "FILE" - No
  such file or directory', exit 1). Both captured on this project's build machine.
- ``TOOL -d DEV -i FILE -y burn``: the "Current FW version on flash / New FW version"
  block, 'Burning FW image without signatures - OK', 'Restoring signature - OK' and
  '-I- To load new FW run mstfwreset or reboot machine.' (mstflint issue #32); the flash
  takes the image's version, the running version stays until reboot(). An image for
  another PSID fails with '-E- Burning failed: PSID mismatch ...' (wording this
  stand-in's own; the module never sends such a burn). Without -y the stand-in refuses,
  as flint would wait for an answer on a terminal.
- A -d the host does not have: '-E- Cannot open Device: DEV. No such file or directory.
  MFE_CR_ERROR', exit 1 (captured from real mstflint 4.21). Errors go to stdout, as the
  real tool prints them.

A card may show several PCI functions (``functions``: 0000:1b:00.0 and 0000:1b:00.1 of a
dual-port card) that share its one flash. A burn sleeps ``busy.seconds`` (standin_busy:
stand-in timing, a real burn takes minutes) and records two burns of one card at once.

Every call is recorded in ``calls`` so tests can assert what ran and what did not.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from standin_busy import Busy

IMAGE_MARKER = "RDMA-FABRIC STAND-IN FIRMWARE IMAGE (not a real ConnectX image)"


def write_image(path: Path, psid: str, version: str, image_type: str = "FS4") -> Path:
    """Write a stand-in image file that this stand-in's `-i FILE query` understands."""
    path.write_text(f"{IMAGE_MARKER}\npsid={psid}\nversion={version}\ntype={image_type}\n")
    return path


@dataclass
class FlintCard:
    pci: str = "0000:1b:00.0"
    psid: str = "MT_0000000359"
    flash: str = "22.36.1010"
    running: str | None = None
    image_type: str = "FS4"
    guid: str = "b8cef60300a1b2c4"
    # PCI functions sharing this flash: pci with function 0 .. functions-1.
    functions: int = 1

    def addresses(self) -> list[str]:
        return [f"{self.pci[:-1]}{function}" for function in range(self.functions)]

    def __post_init__(self):
        self.running = self.flash if self.running is None else self.running

    def reboot(self):
        self.running = self.flash


def _query_text(image_type, version, running, psid, guid, device: bool) -> str:
    lines = [f"Image type:            {image_type}", f"FW Version:            {version}"]
    if device and running != version:
        lines.append(f"FW Version(Running):   {running}")
    lines.append("FW Release Date:       29.1.2024")
    if image_type == "FS2":
        major, minor, sub = version.split(".")
        lines += [
            f"Product Version:       {int(major):02d}.{int(minor):02d}.{sub[:2]}.{sub[2:]}",
            "Rom Info:              type=PXE version=3.4.752",
            "Device ID:             4103",
            "Description:           Node             Port1            Port2            Sys image",
            "GUIDs:                 " + " ".join(["ffffffffffffffff"] * 4),
            "MACs:                                       f452140a1b20     f452140a1b21",
            "VSD:",
            f"PSID:                  {psid}",
        ]
    else:
        lines += [
            f"Product Version:       {version}",
            "Rom Info:              type=UEFI version=14.32.17 cpu=AMD64,AARCH64",
            "                       type=PXE version=3.7.300 cpu=AMD64",
            "Description:           UID                GuidsNumber",
            f"Base GUID:             {guid}        8",
            f"Base MAC:              {guid[:6]}{guid[-6:]}            8",
            "Image VSD:             N/A",
            "Device VSD:            N/A",
            f"PSID:                  {psid}",
            "Security Attributes:   N/A",
        ]
    return "\n".join(lines) + "\n"


class FlintStandin:
    def __init__(self, *cards: FlintCard, tool: str = "mstflint", busy: Busy | None = None):
        self.cards = list(cards)
        self.tool = tool
        self.calls: list[list[str]] = []
        self.busy = busy or Busy()

    def burns(self):
        return [argv for argv in self.calls if argv[-1] in ("burn", "b")]

    def _card(self, name: str) -> FlintCard | None:
        for card in self.cards:
            if name in card.addresses() or f"0000:{name}" in card.addresses():
                return card
        return None

    @staticmethod
    def _image(path: str) -> tuple[dict | None, str]:
        file = Path(path)
        if not file.is_file():
            return None, (
                f'-E- Cannot open Image: {path}. Can not open file "{path}" - '
                "No such file or directory\n"
            )
        text = file.read_text(errors="replace")
        if not text.startswith(IMAGE_MARKER):
            return None, f"-E- Failed to query image: {path}. No valid image found\n"
        fields = dict(line.split("=", 1) for line in text.splitlines()[1:] if "=" in line)
        return fields, ""

    def run(self, argv: list[str]) -> tuple[int, str, str]:
        self.calls.append(list(argv))
        args = list(argv[1:])
        device = image = None
        yes = False
        words = []
        while args:
            arg = args.pop(0)
            if arg == "-d":
                device = args.pop(0)
            elif arg == "-i":
                image = args.pop(0)
            elif arg in ("-y", "--yes"):
                yes = True
            else:
                words.append(arg)
        command = words[0] if words else ""
        card = None
        if device is not None:
            card = self._card(device)
            if card is None:
                error = f"-E- Cannot open Device: {device}. No such file or directory."
                return 1, f"{error} MFE_CR_ERROR\n", ""
        if command in ("query", "q"):
            if card is not None:
                text = _query_text(
                    card.image_type, card.flash, card.running, card.psid, card.guid, True
                )
                return 0, text, ""
            fields, error = self._image(image or "")
            if fields is None:
                return 1, error, ""
            text = _query_text(
                fields["type"], fields["version"], None, fields["psid"], "N/A", False
            )
            return 0, text, ""
        if command in ("burn", "b") and card is not None and image is not None:
            fields, error = self._image(image)
            if fields is None:
                return 1, error, ""
            if fields["psid"] != card.psid:
                error = f"-E- Burning failed: PSID mismatch. The PSID on flash ({card.psid})"
                return 1, f"{error} differs from the PSID in the image ({fields['psid']}).\n", ""
            if not yes:
                return 1, "-E- Burning failed: Aborted by user (no -y and no terminal)\n", ""
            out = (
                "\n"
                f"    Current FW version on flash:  {card.flash}\n"
                f"    New FW version:               {fields['version']}\n"
                "\n"
                "Burning FW image without signatures - OK  \n"
                "Restoring signature                     - OK\n"
                "-I- To load new FW run mstfwreset or reboot machine.\n"
            )
            with self.busy.writing(card.pci):
                card.flash = fields["version"]
            return 0, out, ""
        return 1, f"-E- stand-in: unsupported arguments {argv[1:]}\n", ""


def cli(argv: list[str]) -> int:
    """Run the stand-in as an `mstflint` executable for whole-role tests.

    The cards and the call log live in the JSON file named by RDMA_FABRIC_FLINT_STATE
    ({"cards": [FlintCard fields...], "calls": [...]}), read before and written after
    each call, so successive ansible-playbook runs see one persistent card.
    """
    import json
    import os
    import sys

    state_file = Path(os.environ["RDMA_FABRIC_FLINT_STATE"])
    state = json.loads(state_file.read_text())
    tool = FlintStandin(*(FlintCard(**card) for card in state["cards"]))
    rc, out, err = tool.run(["mstflint", *argv[1:]])
    state["cards"] = [card.__dict__ for card in tool.cards]
    state["calls"] = state.get("calls", []) + tool.calls
    state_file.write_text(json.dumps(state, indent=1))
    sys.stdout.write(out)
    sys.stderr.write(err)
    return rc


def install_cli(bin_dir: Path, state_file: Path, *cards: FlintCard) -> Path:
    """Write an `mstflint` executable into bin_dir that runs cli() on state_file's cards."""
    import json
    import sys

    bin_dir.mkdir(parents=True, exist_ok=True)
    state_file.write_text(json.dumps({"cards": [card.__dict__ for card in cards], "calls": []}))
    script = bin_dir / "mstflint"
    script.write_text(
        f"#!{sys.executable}\n"
        "# STAND-IN for mstflint (tests/support/mstflint_standin.py); not the real tool.\n"
        "import sys\n"
        f"sys.path.insert(0, {str(Path(__file__).parent)!r})\n"
        "from mstflint_standin import cli\n"
        "sys.exit(cli(sys.argv))\n"
    )
    script.chmod(0o755)
    return script
