"""rdma_nic's derived firmware values (module_utils/nic_policy.py): the settings the RoCE
policy asks of both ports, and the images a host gets from the controller's catalog."""

from __future__ import annotations

from ansible_collections.rdma.fabric.plugins.module_utils.nic_policy import (
    cc_prio_mask,
    host_images,
    policy_settings,
)
from ansible_collections.rdma.fabric.plugins.module_utils.roce_policy import normalize_policy


def test_cc_mask_has_one_bit_per_ecn_priority():
    assert [cc_prio_mask(p) for p in ([], [3], [2, 4], [0, 7], [3, 3])] == [0, 8, 20, 129, 8]


def test_default_policy_settings_on_both_ports():
    policy, errors = normalize_policy({})
    assert errors == []
    assert policy_settings(policy) == {
        "CNP_DSCP_P1": 48,
        "CNP_802P_PRIO_P1": 6,
        "ROCE_CC_PRIO_MASK_P1": 8,
        "CNP_DSCP_P2": 48,
        "CNP_802P_PRIO_P2": 6,
        "ROCE_CC_PRIO_MASK_P2": 8,
    }


def test_firmware_dcbx_only_when_the_policy_sets_it():
    policy, _ = normalize_policy({"nic_firmware_dcbx": False})
    settings = policy_settings(policy)
    assert settings["LLDP_NB_DCBX_P1"] is False and settings["LLDP_NB_DCBX_P2"] is False
    assert "LLDP_NB_DCBX_P1" not in policy_settings(policy, dcbx=False)


IMAGES = [
    {"path": "/fw/cx7.bin", "psid": "MT_0000000834"},
    {"path": "/fw/cx6dx.bin", "psid": "MT_0000000359"},
]


def test_a_host_gets_the_images_of_its_targets_psids():
    devices = [
        {"name": "mlx5_0", "board_id": "MT_0000000834"},
        {"name": "mlx5_1", "board_id": "MT_0000000359"},
    ]
    assert host_images(IMAGES, devices, ["mlx5_0"]) == ["/fw/cx7.bin"]
    assert host_images(IMAGES, devices, ["mlx5_0", "mlx5_1"]) == ["/fw/cx7.bin", "/fw/cx6dx.bin"]


def test_every_image_when_a_targets_psid_is_unknown():
    devices = [{"name": "mlx5_0", "board_id": "MT_0000000834"}, {"name": "mlx5_1"}]
    assert host_images(IMAGES, devices, ["mlx5_0", "mlx5_1"]) == [i["path"] for i in IMAGES]
    # A target given by PCI address is no device name: every image.
    assert host_images(IMAGES, devices, ["0000:1a:00.0"]) == [i["path"] for i in IMAGES]
    assert host_images([], devices, ["mlx5_0"]) == []
