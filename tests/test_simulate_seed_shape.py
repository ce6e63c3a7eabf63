"""Seed 000 §7.1's simulated-user scenario loads as written, `success` included."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from trajcheck.errors import DatasetError
from trajcheck.run.simulated_user import Scenario, load_scenarios

SEED = {"persona": "New employee in Pune, terse, not technical",
        "goal": "Get VPN access approved; you don't know which form to use",
        "hidden_facts": {"role": "employee", "start_date": "last week", "manager": "a.rao"},
        "success": ["access request ticket created with manager a.rao", "user told expected SLA"]}


def test_seed_scenario_shape_loads_with_success(tmp_path: Path) -> None:
    f = tmp_path / "s.json"
    f.write_text(json.dumps(SEED))
    (sc,) = load_scenarios(f)
    assert sc.success_criteria == tuple(SEED["success"])
    assert sc.id == "s-" + hashlib.sha256(SEED["goal"].encode()).hexdigest()[:10]
    assert [h.name for h in sc.hidden_facts] == ["role", "start_date", "manager"]
    case = sc.to_case()
    assert case.metadata["success_criteria"] == SEED["success"]


def test_success_and_success_criteria_disagreeing_is_an_error() -> None:
    with pytest.raises(DatasetError, match="give 'success' or 'success_criteria', not both"):
        Scenario.from_dict({**SEED, "id": "x", "success_criteria": ["other"]})
    same = Scenario.from_dict({**SEED, "id": "x", "success_criteria": SEED["success"]})
    assert same.id == "x" and same.success_criteria == tuple(SEED["success"])
