"""The team config's [runs] section (evaluator/config.py): caps, lease, who runs runs, on what engine."""
import pytest

from evaluator.config import LAPTOP, from_dict
from evaluator.errors import ConfigError
from evaluator.store.jobs import Limits


def test_no_runs_section_means_no_caps_and_a_local_worker():
    assert LAPTOP.runs.limits == Limits() and LAPTOP.runs.workers == "local" and LAPTOP.runs.engine == "local"
    assert (LAPTOP.runs.ray_address, LAPTOP.runs.ray_workers) == ("", 2)  # with engine "ray": a local cluster


def test_runs_section_is_read_into_limits():
    runs = from_dict({"runs": {"max_running_per_user": 2, "max_queued": 50, "lease_s": 20, "workers": "external",
                               "engine": "ray"}}, "team.toml").runs
    assert runs.limits == Limits(max_running_per_user=2, max_queued=50, lease_s=20.0)
    assert (runs.workers, runs.engine) == ("external", "ray")


def test_ray_keys_name_the_cluster_and_the_workers_a_run():
    runs = from_dict({"runs": {"engine": "ray", "ray_address": " ray://head:10001 ", "ray_workers": 8}}, "t.toml").runs
    assert (runs.engine, runs.ray_address, runs.ray_workers) == ("ray", "ray://head:10001", 8)


@pytest.mark.parametrize("table, named", [
    ({"max_queued": -1}, "runs.max_queued"),
    ({"max_running_per_user": "2"}, "runs.max_running_per_user"),
    ({"lease_s": 0.5}, "runs.lease_s"),
    ({"workers": "remote"}, "runs.workers"),
    ({"engine": "spark"}, "runs.engine"),
    ({"slots": 3}, "runs.slots"),
    ({"engine": "ray", "ray_workers": 0}, "runs.ray_workers must be 1 or more"),
    ({"engine": "ray", "ray_workers": "4"}, "runs.ray_workers must be int"),
    ({"engine": "ray", "ray_workers": True}, "runs.ray_workers must be int"),
    ({"engine": "ray", "ray_address": 10001}, "runs.ray_address must be str"),
    ({"ray_address": "auto"}, "runs.ray_address is set but runs.engine is 'local'"),
    ({"engine": "local", "ray_workers": 4}, "runs.ray_workers is set but runs.engine is 'local'"),
])
def test_a_bad_runs_value_is_an_error_naming_the_file_and_key(table, named):
    with pytest.raises(ConfigError, match=rf"team\.toml: .*{named.replace('.', '[.]')}"):
        from_dict({"runs": table}, "team.toml")
