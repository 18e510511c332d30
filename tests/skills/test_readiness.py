from __future__ import annotations

import json
import os
import stat

import lemon_skills
from lemon_skills.skills.catalog.readiness import current_platform
from tests.helpers.skills import write_skill


def make_bin(directory, name):
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text("#!/bin/sh\nexit 0\n", "utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_ready_skill(project, project_skills):
    write_skill(project_skills, "plain")
    st = lemon_skills.status("plain", cwd=project)
    assert st.ready and st.activation_state == "active"
    assert st.missing_bins == () and st.error is None


def test_missing_binary_makes_skill_not_ready(project, project_skills, tmp_path, monkeypatch):
    bindir = tmp_path / "bin"
    make_bin(bindir, "present-tool")
    monkeypatch.setenv("PATH", str(bindir))
    write_skill(project_skills, "k8s", extra="requires:\n  bins: [present-tool, kubectl-nope]")
    st = lemon_skills.status("k8s", cwd=project)
    assert not st.ready
    assert st.activation_state == "not_ready"
    assert st.missing_bins == ("kubectl-nope",)


def test_any_bins_needs_only_one(project, project_skills, tmp_path, monkeypatch):
    bindir = tmp_path / "bin"
    make_bin(bindir, "podman")
    monkeypatch.setenv("PATH", str(bindir))
    write_skill(project_skills, "ok", extra="requires:\n  any_bins: [docker, podman]")
    write_skill(project_skills, "none", extra="requires:\n  any_bins: [docker, nerdctl]")
    assert lemon_skills.status("ok", cwd=project).ready
    assert lemon_skills.status("none", cwd=project).missing_any_bins == ("docker", "nerdctl")


def test_env_and_config_unset_or_empty_are_missing(project, project_skills, monkeypatch):
    monkeypatch.setenv("SET_VAR", "value")
    monkeypatch.setenv("EMPTY_VAR", "  ")
    write_skill(
        project_skills,
        "envy",
        extra="requires:\n  env: [SET_VAR, EMPTY_VAR, UNSET_VAR]\n  config: [API_KEY]",
    )
    st = lemon_skills.status("envy", cwd=project)
    assert st.missing_env == ("EMPTY_VAR", "UNSET_VAR")
    assert st.missing_config == ("API_KEY",)
    assert st.activation_state == "not_ready"


def test_config_can_come_from_skills_json(project, project_skills):
    write_skill(project_skills, "cfg", extra="requires:\n  config: [API_KEY]")
    (project / ".lemon" / "skills.json").write_text(
        json.dumps({"version": 1, "skills": {"cfg": {"config": {"API_KEY": "x"}}}}), "utf-8"
    )
    assert lemon_skills.status("cfg", cwd=project).ready


def test_lemon_metadata_requirements_are_enforced(project, project_skills, monkeypatch):
    monkeypatch.setenv("PATH", "")
    write_skill(
        project_skills, "gh", extra='metadata: { "lemon": { "requires": { "bins": ["gh"] } } }'
    )
    assert lemon_skills.status("gh", cwd=project).missing_bins == ("gh",)


def test_platform_incompatible(project, project_skills):
    other = "win32" if current_platform() != "win32" else "linux"
    write_skill(project_skills, "winonly", extra=f"platforms: [{other}]")
    st = lemon_skills.status("winonly", cwd=project)
    assert st.activation_state == "platform_incompatible"
    assert not st.platform_compatible and not st.ready


def test_disabled_skill_is_hidden(project, project_skills):
    write_skill(project_skills, "off")
    lemon_skills.disable("off", cwd=project)
    st = lemon_skills.status("off", cwd=project)
    assert st.activation_state == "hidden" and st.disabled and st.disabled_in == ("global",)


def test_unknown_key(project):
    st = lemon_skills.status("nope", cwd=project)
    assert st.error == "Skill not found: nope"
    assert not st.ready and st.activation_state == "not_ready"


def test_blocked_by_lockfile_audit_verdict(project, project_skills):
    write_skill(project_skills, "risky")
    lock = project / ".lemon" / "skills.lock.json"
    lock.write_text(
        json.dumps({"version": 1, "skills": {"risky": {"audit": {"verdict": "block"}}}}), "utf-8"
    )
    assert lemon_skills.status("risky", cwd=project).activation_state == "blocked"


def test_status_to_dict_always_has_every_key(project):
    d = lemon_skills.status("nope", cwd=project).to_dict()
    assert set(d) >= {
        "ready",
        "activation_state",
        "platform_compatible",
        "missing_bins",
        "missing_env",
        "missing_config",
        "disabled",
        "error",
    }
    assert os.sep not in d["activation_state"]
