"""rdma.fabric.nic_firmware and rdma.fabric.mlxconfig with ``devices``: a host's cards at once.

The modules run in-process against the stand-ins of mstflint_standin / mstconfig_standin
(see their docstrings: not the real tools), whose burns and sets sleep BUSY seconds
(standin_busy: stand-in timing; a real burn takes minutes). Cards done side by side take
about one BUSY; one after another, one BUSY per card.
"""

from __future__ import annotations

import time

import pytest
from ansible_collections.rdma.fabric.plugins.modules import mlxconfig, nic_firmware
from mstconfig_standin import ConnectX, StandinTool
from mstflint_standin import FlintCard, FlintStandin, write_image
from standin_busy import Busy
from sysfs_tree import add_pci_bus_entry

BUSY = 0.6
PSID = "MT_0000000359"
NEW = "fw-ConnectX6Dx-rel-22_39_2048-MCX623106AN-CDA_Ax.bin"
CARDS = ["0000:1a:00.0", "0000:3b:00.0", "0000:5e:00.0", "0000:86:00.0"]


@pytest.fixture
def host(tmp_path):
    root = tmp_path / "root"
    for pci in [*CARDS, "0000:3b:00.1"]:
        add_pci_bus_entry(root, pci)
    return root


@pytest.fixture
def images(tmp_path):
    folder = tmp_path / "firmware"
    folder.mkdir()
    write_image(folder / NEW, PSID, "22.39.2048")
    return folder


def flint(module_with_tool, host, images, *cards, parallel=8):
    return module_with_tool(
        nic_firmware,
        FlintStandin(*cards, busy=Busy(BUSY)),
        sysfs_root=str(host),
        image_dir=str(images),
        parallel=parallel,
    )


def timed(run, **args):
    start = time.monotonic()
    result = run(**args)
    return result, time.monotonic() - start


def test_burns_of_four_cards_run_side_by_side(module_with_tool, host, images):
    cards = [FlintCard(pci=pci, psid=PSID, flash="22.36.1010") for pci in CARDS]
    run = flint(module_with_tool, host, images, *cards)
    result, wall = timed(run, devices=CARDS)
    assert wall < 2 * BUSY < len(CARDS) * BUSY, f"{wall:.2f} s: the burns ran one after another"
    assert run.tool.busy.most_at_once == len(CARDS)
    assert result["changed"] and result["reboot_required"]
    assert [card["device"] for card in result["cards"]] == CARDS
    assert [card["pci_address"] for card in result["cards"]] == CARDS
    assert all(card["burned"] and card["after"] == "22.39.2048" for card in result["cards"])
    assert [card.flash for card in cards] == ["22.39.2048"] * len(CARDS)
    assert sorted(argv[2] for argv in run.tool.burns()) == CARDS


def test_parallel_bounds_the_cards_at_once(module_with_tool, host, images):
    cards = [FlintCard(pci=pci, psid=PSID, flash="22.36.1010") for pci in CARDS]
    run = flint(module_with_tool, host, images, *cards, parallel=2)
    result, wall = timed(run, devices=CARDS)
    assert run.tool.busy.most_at_once == 2
    assert wall >= 2 * BUSY, f"{wall:.2f} s: more than 2 cards at once"
    assert all(card["burned"] for card in result["cards"])


def test_functions_of_one_card_share_the_flash_and_are_not_burned_twice(
    module_with_tool, host, images
):
    dual = FlintCard(pci="0000:3b:00.0", psid=PSID, flash="22.36.1010", functions=2)
    other = FlintCard(pci="0000:1a:00.0", psid=PSID, flash="22.36.1010")
    run = flint(module_with_tool, host, images, dual, other)
    result = run(devices=["0000:3b:00.0", "0000:3b:00.1", "0000:1a:00.0"])
    assert run.tool.busy.overlaps == []
    first, second, third = result["cards"]
    assert first["burned"] and third["burned"]
    # The second function sees the flash its sibling burned: nothing to burn, reboot due.
    assert not second["burned"] and second["reboot_required"]
    assert second["before"] == "22.39.2048"
    assert len(run.tool.burns()) == 2


def test_one_failing_card_is_named_and_the_others_still_burn(module_with_tool, host, images):
    cards = [FlintCard(pci=pci, psid=PSID, flash="22.36.1010") for pci in CARDS]
    cards[2].psid = "MT_0000000834"  # no image for this board in the directory
    run = flint(module_with_tool, host, images, *cards)
    result = run(devices=[*CARDS, "mlx5_9"])
    assert result["failed"] and result["changed"]
    assert "2 of 5 device(s) failed" in result["msg"]
    assert (
        "0000:5e:00.0 (0000:5e:00.0): 0000:5e:00.0: no firmware image for PSID MT_0000000834"
        in (result["msg"])
    )
    assert "mlx5_9: device mlx5_9: no such RDMA device" in result["msg"]
    by_device = {card["device"]: card for card in result["cards"]}
    assert by_device["0000:5e:00.0"]["failed"]
    assert by_device["mlx5_9"]["failed"] and by_device["mlx5_9"]["pci_address"] is None
    assert [by_device[pci].get("burned") for pci in CARDS] == [True, True, None, True]
    assert cards[2].flash == "22.36.1010"


def test_check_mode_burns_nothing_and_diffs_every_card(module_with_tool, host, images):
    cards = [FlintCard(pci=pci, psid=PSID, flash="22.36.1010") for pci in CARDS[:2]]
    cards[1].flash = cards[1].running = "22.39.2048"
    run = flint(module_with_tool, host, images, *cards)
    result = run(check_mode=True, diff=True, devices=CARDS[:2])
    assert run.tool.burns() == []
    assert result["changed"]
    assert [card["burned"] for card in result["cards"]] == [True, False]
    assert [card["after"] for card in result["cards"]] == ["22.39.2048", "22.39.2048"]
    assert [diff["after"] for diff in result["diff"]] == [f"22.39.2048 ({NEW})\n", "22.39.2048\n"]
    headers = [diff["before_header"] for diff in result["diff"]]
    assert [pci in header for pci, header in zip(CARDS[:2], headers, strict=True)] == [True, True]
    assert all("diff" not in card for card in result["cards"])


def test_device_and_devices_are_exclusive(module_with_tool, host, images):
    run = flint(module_with_tool, host, images, FlintCard(pci=CARDS[0]))
    result = run(device=CARDS[0], devices=CARDS)
    assert result["failed"] and "mutually exclusive" in result["msg"]
    result = run(devices=CARDS, parallel=0)
    assert result["failed"] and "parallel" in result["msg"]


# --- mlxconfig --------------------------------------------------------------------------


def configure(module_with_tool, host, *devices):
    return module_with_tool(mlxconfig, StandinTool(*devices, busy=Busy(BUSY)), sysfs_root=str(host))


def test_settings_of_four_cards_run_side_by_side_with_per_device_overrides(module_with_tool, host):
    devices = [ConnectX(pci=pci) for pci in CARDS]
    run = configure(module_with_tool, host, *devices)
    result, wall = timed(
        run,
        devices=CARDS,
        settings={"SRIOV_EN": True, "NUM_OF_VFS": 8},
        device_settings={CARDS[3]: {"NUM_OF_VFS": 16}},
    )
    assert wall < 2 * BUSY, f"{wall:.2f} s: the sets ran one after another"
    assert run.tool.busy.most_at_once == len(CARDS)
    assert result["changed"] and result["reboot_required"]
    assert [card["device"] for card in result["cards"]] == CARDS
    assert [card["changes"]["NUM_OF_VFS"] for card in result["cards"]] == ["8", "8", "8", "16"]
    assert [d.params["NUM_OF_VFS"].next_boot for d in devices] == ["8", "8", "8", "16"]


def test_a_failing_set_names_its_device_and_keeps_the_others(module_with_tool, host):
    devices = [ConnectX(pci=pci) for pci in CARDS[:3]]
    devices[1].params["NUM_OF_VFS"].maximum = 4
    run = configure(module_with_tool, host, *devices)
    result = run(devices=CARDS[:3], settings={"NUM_OF_VFS": 8}, check_mode=False, diff=True)
    assert result["failed"] and result["changed"]
    assert f"1 of 3 device(s) failed: {CARDS[1]} ({CARDS[1]}): " in result["msg"]
    assert "larger than maximum allowed 4" in result["msg"]
    first, failed, third = result["cards"]
    assert first["changes"] == third["changes"] == {"NUM_OF_VFS": "8"}
    assert failed["failed"] and failed["pci_address"] == CARDS[1]
    assert len(result["diff"]) == 2, "only the cards that got through have a diff"


def test_mlxconfig_check_mode_sets_nothing(module_with_tool, host):
    devices = [ConnectX(pci=pci) for pci in CARDS[:2]]
    run = configure(module_with_tool, host, *devices)
    result = run(devices=CARDS[:2], settings={"SRIOV_EN": True}, check_mode=True, diff=True)
    assert run.tool.sets() == []
    assert result["changed"]
    assert [diff["after"] for diff in result["diff"]] == ["SRIOV_EN=1\n"] * 2
    assert [d.params["SRIOV_EN"].next_boot for d in devices] == ["False(0)"] * 2
