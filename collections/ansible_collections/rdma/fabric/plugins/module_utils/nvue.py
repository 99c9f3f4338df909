# Copyright: rdma-fabric contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A client of the Cumulus Linux NVUE REST API (HTTPS, port 8765, /nvue_v1) and its
revision workflow, on Ansible's own HTTP utilities (ansible.module_utils.urls).

The documented contract (Cumulus Linux 5.x, "NVUE API"):
  POST  /nvue_v1/revision                      -> {"<id>": {"state": "pending", ...}}
  PATCH /nvue_v1/<path>?rev=<id>               stage a subtree (JSON null removes)
  PATCH /nvue_v1/revision/<id>                 {"state": "apply", "auto-prompt": {"ays": "ays_yes"}}
  GET   /nvue_v1/revision/<id>                 poll until "applied"; "invalid", "ays_fail"
                                               and other *_fail states carry issues
  PATCH /nvue_v1/revision/applied              {"state": "save", ...} -> startup config
  GET   /nvue_v1/<path>?rev=applied&filled=false  what is applied
Revision ids are numbers ("1") on newer releases and "changeset/cumulus/<date>_<id>" on
5.0-5.5: always URL-encoded whole (%2F) in a path or ?rev=.
"""

from __future__ import annotations

import json
import time
from urllib.error import HTTPError, URLError
from urllib.parse import quote

from ansible.module_utils.urls import open_url

DONE = "applied"
# States a revision passes through after "apply" (anything else is a failure).
IN_PROGRESS = ("apply", "applying", "ays", "pending_apply", "checking", "checked", "ignore_fail")
AUTO_PROMPT = {"ays": "ays_yes"}


class NvueError(Exception):
    """An API call failed or a revision did not apply; the message says which and why."""


def _state_object(body, rev):
    """The state object of a revision reply, keyed by the id or not (both are published)."""
    if isinstance(body, dict) and "state" not in body:
        if rev in body and isinstance(body[rev], dict):
            return body[rev]
        if len(body) == 1:
            return next(iter(body.values()))
    return body if isinstance(body, dict) else {}


def issues_text(state):
    """The API's own messages for a failed revision, one per issue."""
    issues = (state.get("transition") or {}).get("issue") or {}
    messages = [
        str(issue.get("message") or issue.get("code") or issue).strip()
        for _unused, issue in sorted(issues.items())
        if isinstance(issue, dict)
    ]
    progress = (state.get("transition") or {}).get("progress")
    if progress:
        messages.append(str(progress))
    return "; ".join(messages) or "no message"


class NvueClient:
    def __init__(
        self,
        host,
        port=8765,
        user=None,
        password=None,
        validate_certs=True,
        ca_path=None,
        timeout=30,
        use_proxy=True,
        scheme="https",
    ):
        self.base = f"{scheme}://{host}:{port}/nvue_v1"
        self.opts = {
            "url_username": user,
            "url_password": password,
            "force_basic_auth": True,
            "validate_certs": validate_certs,
            "ca_path": ca_path,
            "timeout": timeout,
            "use_proxy": use_proxy,
        }
        self.calls = []

    def request(self, method, path, query=None, body=None):
        url = self.base + path
        if query:
            url += "?" + "&".join(f"{k}={quote(str(v), safe='')}" for k, v in query.items())
        headers = {"Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body)
            headers["Content-Type"] = "application/json"
        self.calls.append(f"{method} {url}")
        try:
            reply = open_url(url, data=data, headers=headers, method=method, **self.opts)
            text = reply.read()
        except HTTPError as err:
            detail = err.read().decode("utf-8", "replace").strip() if err.fp else ""
            raise NvueError(f"{method} {url}: HTTP {err.code} {err.reason}: {detail}") from err
        except (URLError, OSError) as err:
            raise NvueError(f"{method} {url}: {getattr(err, 'reason', err)}") from err
        if not text:
            return {}
        try:
            return json.loads(text)
        except ValueError as err:
            raise NvueError(f"{method} {url}: the reply is not JSON: {text[:200]!r}") from err

    def get(self, path, rev="applied"):
        """A subtree of revision ``rev`` ("applied" by default), {} when not configured."""
        try:
            return self.request("GET", "/" + path, {"rev": rev, "filled": "false"})
        except NvueError as err:
            if "HTTP 404" in str(err):
                return {}
            raise

    def create_revision(self):
        body = self.request("POST", "/revision")
        if not isinstance(body, dict) or len(body) != 1:
            raise NvueError(f"POST /revision: expected one revision, got {body!r}")
        return next(iter(body))

    def patch(self, rev, tree):
        """Stage ``tree`` (from the root) in revision ``rev``."""
        return self.request("PATCH", "/", {"rev": rev}, tree)

    def revision_state(self, rev):
        return _state_object(self.request("GET", "/revision/" + quote(rev, safe="")), rev)

    def apply(self, rev, timeout=120, interval=1.0):
        """Apply ``rev`` and wait; NvueError with the API's messages when it fails."""
        self.request(
            "PATCH",
            "/revision/" + quote(rev, safe=""),
            body={"state": "apply", "auto-prompt": AUTO_PROMPT},
        )
        deadline = time.monotonic() + timeout
        while True:
            state = self.revision_state(rev)
            name = state.get("state")
            if name == DONE:
                return state
            if name not in IN_PROGRESS:
                raise NvueError(f"revision {rev} is {name!r}: {issues_text(state)}")
            if time.monotonic() > deadline:
                raise NvueError(f"revision {rev} still {name!r} after {timeout} s")
            time.sleep(interval)

    def save(self):
        return self.request(
            "PATCH", "/revision/applied", body={"state": "save", "auto-prompt": AUTO_PROMPT}
        )
