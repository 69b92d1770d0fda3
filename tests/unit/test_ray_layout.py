"""The actor layout comes from the cluster joined (ray.nodes()), never from the driver's own CUDA."""

from __future__ import annotations

from typing import Any

from dagster_project.index.ray_actors import plan_layout


def node(cpus: float, gpus: float = 0, alive: bool = True, ident: str = "n") -> dict[str, Any]:
    resources = {"CPU": cpus, **({"GPU": gpus} if gpus else {})}
    return {"NodeID": ident, "Alive": alive, "Resources": resources}


def test_one_actor_per_gpu_of_the_cluster_whatever_the_driver_has() -> None:
    layout = plan_layout([node(8, gpus=2, ident="a"), node(8, gpus=1, ident="b"), node(4, ident="c")])
    assert (layout.actors, layout.gpus_per_actor, layout.device) == (3, 1, "cuda")
    assert layout.nodes == ("a", "b", "c")


def test_cpu_actors_fit_the_smallest_node_and_fill_every_node() -> None:
    assert (plan_layout([node(2)]).actors, plan_layout([node(2)]).cpus_per_actor) == (1, 2)  # this machine
    two_small = plan_layout([node(1, ident="head"), node(1, ident="worker")])
    assert (two_small.actors, two_small.cpus_per_actor) == (2, 1)  # one on each node: none waits for CPUs
    big = plan_layout([node(16), node(8)])
    assert (big.actors, big.cpus_per_actor, big.device) == (6, 4, "cpu")  # threads capped, more copies instead


def test_dead_nodes_do_not_count_and_settings_override() -> None:
    assert plan_layout([node(4), node(64, gpus=4, alive=False)]).device == "cpu"
    forced = plan_layout([node(16)], actors=1, cpus_per_actor=3)
    assert (forced.actors, forced.cpus_per_actor) == (1, 3)
    assert plan_layout([node(4, gpus=1)], actors=2).actors == 2
