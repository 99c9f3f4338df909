"""A stand-in for ConnectX devices and the mstconfig/mlxconfig command line.

STAND-IN, NOT THE REAL THING: no test world here has a ConnectX NIC. This class answers
the argument lists rdma.fabric.mlxconfig runs the way the tools document and the way the
captured outputs in the fixtures show:

- ``TOOL [-e] [-y] -d DEV query|q``: a 'Device #1:' block (Device type / Name /
  Description / Device) and a 'Configurations:' table in the newer wide layout (8-space
  indent, 44-wide names, 21-wide values). With -e the columns are 'Default Current Next
  Boot' (ConnectX-3: 'Default Next Boot'), without it 'Next Boot'. A row whose next-boot
  value differs from its default or current value starts with '*'.
- ``TOOL -y -d DEV set NAME=VALUE ...``: the 'Next Boot New' table, the prompt answered
  by -y (' Apply new Configuration? (y/n) [n] : y'), 'Applying... Done!' and
  '-I- Please reboot machine to load new configurations.'; the values become next-boot
  values, the running (current) values stay until reboot(). Values are accepted as enum
  names (case-insensitive) or numbers. A value above a parameter's maximum fails with
  'Applying... Failed!' and '-E- Parameter NAME' value is larger than maximum allowed N'
  (exit 3), as a captured NUM_OF_VFS failure does. Without -y nothing is applied.
- A -d the host does not have: '-E- Cannot open Device: DEV. No such file or directory.
  MFE_CR_ERROR', exit 1 (the mstflint device-open error).
- The wording of errors for unknown names or bad values in ``set`` is this stand-in's
  own (no capture of them was available); the module never sends such a set.

A set sleeps ``busy.seconds`` (standin_busy: stand-in timing, a real set takes seconds)
and records two sets of one device at once.

Every call is recorded in ``calls`` so tests can assert what ran and what did not.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from standin_busy import Busy

NAME_W, VALUE_W, INDENT = 44, 21, 8


@dataclass
class Param:
    default: str
    current: str | None = None
    next_boot: str | None = None
    # Enum NAME -> number; None for a plain number.
    enum: dict[str, int] | None = None
    maximum: int | None = None

    def __post_init__(self):
        self.current = self.default if self.current is None else self.current
        self.next_boot = self.current if self.next_boot is None else self.next_boot


def _bool():
    return {"False": 0, "True": 1}


LINK_TYPES = {"IB": 1, "ETH": 2, "VPI": 3}


def connectx6dx_params() -> dict[str, Param]:
    """A dual-port ConnectX-6 Dx as shipped: Ethernet, SR-IOV off, default CNP marking."""
    return {
        "MEMIC_BAR_SIZE": Param("0"),
        "HOST_CHAINING_DESCRIPTORS": Param("Array[0..7]"),
        "LINK_TYPE_P1": Param("ETH(2)", enum=LINK_TYPES),
        "LINK_TYPE_P2": Param("ETH(2)", enum=LINK_TYPES),
        "SRIOV_EN": Param("False(0)", enum=_bool()),
        "NUM_OF_VFS": Param("0", maximum=127),
        "ATS_ENABLED": Param("False(0)", enum=_bool()),
        "ADVANCED_PCI_SETTINGS": Param("False(0)", enum=_bool()),
        "MAX_ACC_OUT_READ": Param("0", maximum=255),
        "CNP_DSCP_P1": Param("48", maximum=63),
        "CNP_802P_PRIO_P1": Param("6", maximum=7),
        "CNP_DSCP_P2": Param("48", maximum=63),
        "CNP_802P_PRIO_P2": Param("6", maximum=7),
        "ROCE_CC_PRIO_MASK_P1": Param("255", maximum=255),
        # DCBX in the firmware, per port (mlxconfig's LLDP_NB_DCBX_P1/P2).
        "LLDP_NB_DCBX_P1": Param("True(1)", enum=_bool()),
        "LLDP_NB_DCBX_P2": Param("True(1)", enum=_bool()),
    }


@dataclass
class ConnectX:
    pci: str = "0000:1b:00.0"
    type: str = "ConnectX6DX"
    name: str = "MCX623106AN-CDA_Ax"
    description: str = (
        "ConnectX-6 Dx EN adapter card; 100GbE; Dual-port QSFP56; PCIe 4.0/3.0 x16; No Crypto"
    )
    params: dict[str, Param] = field(default_factory=connectx6dx_params)
    # ConnectX-3 firmware has no 'Current' column.
    has_current: bool = True

    def reboot(self):
        for param in self.params.values():
            param.current = param.next_boot


class StandinTool:
    """Runs argument lists against ConnectX stand-ins; records every call."""

    def __init__(self, *devices: ConnectX, tool: str = "mstconfig", busy: Busy | None = None):
        self.devices = list(devices)
        self.tool = tool
        self.calls: list[list[str]] = []
        self.busy = busy or Busy()

    def sets(self):
        return [argv for argv in self.calls if "set" in argv]

    def _device(self, name: str) -> ConnectX | None:
        for device in self.devices:
            if name in (device.pci, device.pci.split(":", 1)[1]):
                return device
        return None

    def run(self, argv: list[str]) -> tuple[int, str, str]:
        self.calls.append(list(argv))
        args = list(argv[1:])
        flags = {"-e": False, "-y": False}
        dev = None
        while args and args[0].startswith("-"):
            flag = args.pop(0)
            if flag == "-d":
                dev = args.pop(0)
            elif flag in flags:
                flags[flag] = True
            else:
                return 1, f"-E- Unknown option: {flag}\n", ""
        if not args:
            return 1, "-E- No command given\n", ""
        command, rest = args[0], args[1:]
        device = self._device(dev) if dev else None
        if device is None:
            return (
                1,
                f"-E- Cannot open Device: {dev}. No such file or directory. MFE_CR_ERROR\n",
                "",
            )
        if command in ("q", "query"):
            return self._query(device, flags["-e"])
        if command in ("s", "set"):
            return self._set(device, rest, flags["-y"])
        return 1, f"-E- Unknown command: {command}\n", ""

    def _header(self, device: ConnectX, labels: str) -> list[str]:
        return [
            "",
            "Device #1:",
            "----------",
            "",
            f"Device type:        {device.type:<20}",
            f"Name:               {device.name:<20}",
            f"Description:        {device.description}",
            f"Device:             {device.pci:<20}",
            "",
            "Configurations:" + " " * 41 + labels,
        ]

    @staticmethod
    def _row(name: str, values: list[str], star: bool = False) -> str:
        prefix = "*" + " " * (INDENT - 1) if star else " " * INDENT
        return prefix + name.ljust(NAME_W) + "".join(v.ljust(VALUE_W) for v in values)

    def _query(self, device: ConnectX, extended: bool):
        if extended:
            labels = "Default             Current         Next Boot"
            if not device.has_current:
                labels = "Default             Next Boot"
        else:
            labels = "Next Boot"
        lines = self._header(device, labels)
        for name, p in device.params.items():
            values = [p.next_boot]
            if extended:
                values = (
                    [p.default, p.current, p.next_boot]
                    if device.has_current
                    else [
                        p.default,
                        p.next_boot,
                    ]
                )
            star = p.next_boot not in (p.default, p.current)
            lines.append(self._row(name, values, star))
        return 0, "\n".join(lines) + "\n", ""

    @staticmethod
    def _render(param: Param, text: str) -> str | None:
        """The device's spelling of a value given on the command line; None if invalid."""
        if param.enum is None:
            return text if text.isdigit() else None
        for enum_name, number in param.enum.items():
            if text.casefold() == enum_name.casefold() or text == str(number):
                return f"{enum_name}({number})"
        return None

    def _set(self, device: ConnectX, assignments: list[str], yes: bool):
        new = {}
        for item in assignments:
            name, sep, value = item.partition("=")
            if not sep or name not in device.params:
                return 1, f"-E- Unknown parameter: {name}\n", ""
            rendered = self._render(device.params[name], value)
            if rendered is None:
                return 1, f"-E- Bad value for {name}: {value}\n", ""
            new[name] = (value, rendered)
        lines = self._header(device, "Next Boot       New")
        lines += [self._row(n, [device.params[n].next_boot, r]) for n, (_, r) in new.items()]
        lines += ["", " Apply new Configuration? (y/n) [n] : " + ("y" if yes else "")]
        if not yes:
            return 1, "\n".join(lines + ["Aborted by user"]) + "\n", ""
        for name, (value, _) in new.items():
            maximum = device.params[name].maximum
            if maximum is not None and value.isdigit() and int(value) > maximum:
                lines += [
                    "Applying... Failed!",
                    f"-E- Parameter {name}' value is larger than maximum allowed {maximum}",
                ]
                return 3, "\n".join(lines) + "\n", ""
        with self.busy.writing(device.pci):
            for name, (_, rendered) in new.items():
                device.params[name].next_boot = rendered
        lines += ["Applying... Done!", "-I- Please reboot machine to load new configurations."]
        return 0, "\n".join(lines) + "\n", ""
