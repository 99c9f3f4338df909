# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""SONiC lossless buffers: the BUFFER_PG rows that make the RoCE priority group lossless.

PORT_QOS_MAP ``pfc_enable`` alone sends PFC frames; the headroom that absorbs what is in
flight after a pause comes from the port's lossless BUFFER_PG row, and how that row
looks depends on the switch's buffer model (CONFIG_DB ``DEVICE_METADATA|localhost``
``buffer_model``, "traditional" when absent):

- dynamic (buffermgrdyn): the row ``<port>|<pg>`` with ``profile`` "NULL" asks the
  buffer manager to compute the headroom from the port's speed, cable length
  (CABLE_LENGTH) and MTU (sonic-swss cfgmgr/buffermgrdyn.cpp handleSingleBufferPgEntry:
  a "NULL" profile is "pure dynamic", lossless; sonic-buildimage
  files/build_templates/buffers_config.j2 writes ``<port>|3-4`` that way when
  ``dynamic_mode`` is defined).
- traditional (buffermgr): the row names the profile ``pg_lossless_<speed>_<cable>_profile``
  whose size/xon/xoff/threshold come from the platform's pg_profile_lookup.ini
  (sonic-swss cfgmgr/buffermgr.cpp doSpeedUpdateTask and readPgProfileLookupFile:
  "speed cable size xon xoff threshold [xon_offset]" per line, pool
  ingress_lossless_pool, threshold field "<pool mode>_th"). buffermgr writes rows for the
  PGs in ``pfc_enable`` but never removes the old ones (a "3-4" row stays after PFC moves
  to 5) and creates nothing for a speed/cable pair missing from the lookup file. The patch
  removes the stale lossless rows, refuses a pair the file lacks, and writes the row only
  when CONFIG_DB has its profile: `config apply-patch` refuses a new BUFFER_PROFILE
  (sonic-utilities gcu_field_operation_validators.conf.json: dynamic_th and xoff replace
  only), so a missing profile and its row are left to buffermgr, which writes both when
  the patch changes pfc_enable or CABLE_LENGTH (buffermgr.cpp doSpeedUpdateTask).

The egress side: the RoCE queue must sit in the lossless egress pool. The buffer templates
give queues 3-4 ``egress_lossless_profile`` and 0-2, 5-6 ``egress_lossy_profile``
(sonic-buildimage files/build_templates/buffers_config.j2 BUFFER_QUEUE), so a RoCE queue
elsewhere needs its own BUFFER_QUEUE row; a range row holding it is split (``queue_rows``).

Rendered without a switch, a traditional row names the profile with the literal
``<speed>`` (``SPEED_TOKEN``): the port speed is read from CONFIG_DB PORT when applied.
"""

from __future__ import annotations

BUFFER_MODELS = ("dynamic", "traditional")
SPEED_TOKEN = "<speed>"
LOSSLESS_POOL = "ingress_lossless_pool"
ABSENT = object()
# The lookup file's place on a SONiC host (buffermgrd reads it in the swss container as
# /usr/share/sonic/hwsku/pg_profile_lookup.ini, the host's device/<platform>/<hwsku>).
LOOKUP_PATH = "/usr/share/sonic/device/{platform}/{hwsku}/pg_profile_lookup.ini"


def buffer_model(configdb):
    """The switch's buffer model; SONiC treats a missing field as traditional."""
    meta = (configdb.get("DEVICE_METADATA") or {}).get("localhost") or {}
    return meta.get("buffer_model") or "traditional"


def lookup_path(configdb):
    meta = (configdb.get("DEVICE_METADATA") or {}).get("localhost") or {}
    return LOOKUP_PATH.format(platform=meta.get("platform", ""), hwsku=meta.get("hwsku", ""))


def parse_pg_lookup(text):
    """{(speed, cable): {size, xon, xoff, threshold, xon_offset}} from pg_profile_lookup.ini."""
    table = {}
    for line in text.splitlines():
        words = line.split("#", 1)[0].split()
        if len(words) < 6:
            continue
        speed, cable, size, xon, xoff, threshold = words[:6]
        table[(speed, cable)] = {
            "size": size,
            "xon": xon,
            "xoff": xoff,
            "threshold": threshold,
            "xon_offset": words[6] if len(words) > 6 else "",
        }
    return table


def profile_name(speed, cable_m):
    return f"pg_lossless_{speed}_{cable_m}m_profile"


def _pg_ids(key):
    """The priority groups a BUFFER_PG key ``<port>|3-4`` covers, and its port."""
    port, _sep, pgs = key.partition("|")
    low, _dash, high = pgs.partition("-")
    try:
        return port, set(range(int(low), int(high or low) + 1))
    except ValueError:
        return port, set()


def _lossless(row, profiles):
    """A BUFFER_PG row is lossless when its profile is "NULL" (dynamic) or has headroom."""
    profile = (row or {}).get("profile", "NULL")
    if profile == "NULL":
        return True
    name = profile.strip("[]").split("|")[-1]
    return "xoff" in (profiles.get(name) or {})


# The buffer templates' egress profiles and the queues they give the lossless one.
EGRESS_LOSSLESS_PROFILE = "egress_lossless_profile"
EGRESS_LOSSLESS_POOL = "egress_lossless_pool"
TEMPLATE_LOSSLESS_QUEUES = (3, 4)


def _egress_lossless(name, profiles):
    return (profiles.get(name) or {}).get("pool") == EGRESS_LOSSLESS_POOL


def queue_rows(ports, queue, configdb=None):
    """(BUFFER_QUEUE rows, errors) that put ``queue`` of each port on the lossless egress
    profile. Rendered (no ``configdb``): a ``<port>|<queue>`` row unless the templates' 3-4
    row holds it. Applied: nothing when a lossless row covers it; else the row covering it
    is split so the queue gets its own lossless row and the rest keep their profile."""
    if configdb is None:
        if queue in TEMPLATE_LOSSLESS_QUEUES:
            return {}, []
        return {f"{p}|{queue}": {"profile": EGRESS_LOSSLESS_PROFILE} for p in ports}, []
    profiles = configdb.get("BUFFER_PROFILE") or {}
    lossless = sorted(n for n in profiles if _egress_lossless(n, profiles))
    have = configdb.get("BUFFER_QUEUE") or {}
    rows = {}
    for port in ports:
        covering = [
            (k, r)
            for k, r in have.items()
            if _pg_ids(k) == (port, _pg_ids(k)[1]) and queue in _pg_ids(k)[1]
        ]
        if any(_egress_lossless((r or {}).get("profile", ""), profiles) for _k, r in covering):
            continue
        if queue in TEMPLATE_LOSSLESS_QUEUES and not covering:
            continue  # no row at all: the platform's buffer template owns queues 3-4
        if not lossless:
            return None, [
                f"rdma_roce_policy.roce_priority {queue}: CONFIG_DB has no egress lossless "
                f"buffer profile (pool "
                f"{EGRESS_LOSSLESS_POOL}) for BUFFER_QUEUE {port}|{queue}"
            ]
        for key, row in covering:
            rows[key] = None
            rest = sorted(_pg_ids(key)[1] - {queue})
            for low, high in _runs(rest):
                rows[f"{port}|{low}" if low == high else f"{port}|{low}-{high}"] = dict(row)
        name = EGRESS_LOSSLESS_PROFILE if EGRESS_LOSSLESS_PROFILE in lossless else lossless[0]
        rows[f"{port}|{queue}"] = {"profile": name}
    return rows, []


def _runs(numbers):
    """[(low, high)] of consecutive runs in sorted ``numbers``."""
    runs = []
    for n in numbers:
        if runs and n == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], n)
        else:
            runs.append((n, n))
    return runs


# The platform's lossy ingress profile (buffers_config.j2: BUFFER_PG <port>|0).
INGRESS_LOSSY_PROFILE = "ingress_lossy_profile"


def buffer_tables(
    ports, pg, cable_lengths, model, configdb=None, lookup=None, notes=None, lossy_pgs=()
):
    """(tables, errors): BUFFER_PG rows for the lossless PG ``pg``.

    ``cable_lengths`` maps each port to meters. With ``configdb`` (applied), traditional
    profiles take the port's speed from PORT; a profile CONFIG_DB lacks must be in
    ``lookup`` (``parse_pg_lookup``) and is left to buffermgr with its row (said in
    ``notes``); lossless rows of these ports on other PGs are removed (None). Errors name
    the variable a user changes.

    ``lossy_pgs``: PGs the policy's traffic reaches without PFC (CNP on TC 7 -> PG 7, as
    TC_TO_PRIORITY_GROUP_MAP keeps it); the buffer templates give only PG 0 a lossy row
    (and 3-4 lossless), so each gets ``<port>|<pg>`` on ingress_lossy_profile unless a row
    that stays covers it.
    """
    if model not in BUFFER_MODELS:
        return None, [
            f"the SONiC buffer model must be one of {', '.join(BUFFER_MODELS)}; got {model!r}"
        ]
    configdb = configdb or {}
    have_pgs = configdb.get("BUFFER_PG") or {}
    have_profiles = configdb.get("BUFFER_PROFILE") or {}
    errors = []
    rows = {}
    later = []
    for port in ports:
        key = f"{port}|{pg}"
        if model == "dynamic":
            rows[key] = {"profile": "NULL"}
        else:
            speed = ((configdb.get("PORT") or {}).get(port) or {}).get("speed")
            if configdb and not speed:
                errors.append(f"roce_switch_qos_ports: {port} has no speed in CONFIG_DB PORT")
                continue
            cable = cable_lengths[port]
            name = profile_name(speed or SPEED_TOKEN, cable)
            rows[key] = {"profile": name}
            if configdb and name not in have_profiles:
                if (lookup or {}).get((speed, f"{cable}m")) is None:
                    errors.append(
                        f"roce_switch_qos_cable_length: {cable} m at speed {speed} ({port}) is "
                        "not in the switch's pg_profile_lookup.ini; buffermgr would create no "
                        "lossless profile (use a length the file lists)"
                    )
                    continue
                # buffermgr rewrites a row it owns for this PG; a row here stays until then.
                rows[key] = have_pgs.get(key, ABSENT)
                later.append(f"{key} ({name})")
    for key, row in have_pgs.items():
        port, pgs = _pg_ids(key)
        if port in ports and key not in rows and pgs and _lossless(row, have_profiles):
            rows[key] = None
    if later and notes is not None:
        notes.append(
            "BUFFER_PG " + ", ".join(later) + " left to buffermgr: it writes the profile "
            "from pg_profile_lookup.ini and the row once pfc_enable and CABLE_LENGTH are set "
            "(`config apply-patch` refuses a new BUFFER_PROFILE)"
        )
    for lossy in lossy_pgs:
        if configdb and INGRESS_LOSSY_PROFILE not in have_profiles:
            errors.append(
                f"rdma_roce_policy.cnp_priority: PG {lossy} needs a lossy buffer and CONFIG_DB "
                f"has no BUFFER_PROFILE {INGRESS_LOSSY_PROFILE}"
            )
            break
        for port in ports:
            kept = [
                k
                for k in have_pgs
                if _pg_ids(k)[0] == port and lossy in _pg_ids(k)[1] and rows.get(k, 0) is not None
            ]
            if not kept:
                rows[f"{port}|{lossy}"] = {"profile": INGRESS_LOSSY_PROFILE}
    tables = {"BUFFER_PG": {k: v for k, v in rows.items() if v is not ABSENT}}
    # The RoCE queue is the PG's number (TC_TO_QUEUE_MAP and TC_TO_PRIORITY_GROUP_MAP are
    # identity on the lossless class).
    queues, queue_errors = queue_rows(ports, pg, configdb or None)
    errors += queue_errors
    if queues:
        tables["BUFFER_QUEUE"] = queues
    return (None if errors else tables), errors
