"""Behaviour cloning: start the policy network from a reference dispatcher's decisions.

``hpcgym train ALGORITHM --bc-policy NAME`` plays ``--bc-steps`` steps of training
windows with the dispatcher preset ``NAME`` acting (:class:`hpcgym.env.experts.Expert`:
in policy mode it always picks ``NAME``; in job mode it starts the jobs ``NAME`` starts;
in learned backfilling ``NAME`` is the environment's order and it backfills as ``NAME`` does),
then trains the model's policy on those (observation, action) pairs before PPO starts:

* the policy head maximises the log-probability of the expert's action (with the
  environment's action mask for MaskablePPO, so the loss is over valid actions only);
* the value head regresses the discounted return of the expert's episode from each step
  (``gamma`` of the run), so PPO's first advantages are not computed against a random
  critic, which would pull the cloned policy away at the first update; the two parts'
  gradients are clipped apart (norm 0.5 each, PPO's ``max_grad_norm``): value errors in
  bsld units would otherwise take the whole clipped step;
* ``--bc-epochs`` passes over the demonstrations in minibatches of ``--bc-batch-size``,
  with Adam at ``--bc-learning-rate``; a tenth of the episodes (at least one) is held out
  and the accuracy on them (the network's most likely valid action equals the expert's) is
  reported beside the training accuracy.

``--bc-policy best`` first scores every preset of ``--bc-candidates`` (policy mode: the
environment's ``policies``; learned backfilling: its ``order``, the one expert there) on the
run's validation windows and clones the best: the
reference is picked on the validation split, never on test windows. The cloned model is
scored on the validation windows before PPO starts (step 0 of ``training.json``'s
validations) and saved as ``best_model.zip`` if nothing later beats it.

This is a short loop written here rather than the ``imitation`` library's BC: that
library pins older Gymnasium and stable-baselines3 releases than hpcgym uses, and the loop
above is the part of it needed (its ``bc.BC`` trains the same negative log-likelihood, with
an entropy and L2 term, and no value head).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from hpcgym.common.errors import InvalidConfigError


@dataclass
class Demonstrations:
    """Steps of a dispatcher acting in training windows.

    Attributes:
        obs: (n, d) flattened observations.
        actions: (n,) the expert's actions.
        masks: (n, A) the valid actions at each step.
        rewards: (n,) the reward of each step.
        returns: (n,) the discounted return of the rest of the episode from each step.
        episode: (n,) the episode each step belongs to.
        off_window: decisions where the expert's jobs were all beyond the K shown
            (:attr:`hpcgym.env.experts.Expert.off_window`).
    """

    obs: np.ndarray
    actions: np.ndarray
    masks: np.ndarray
    rewards: np.ndarray
    returns: np.ndarray
    episode: np.ndarray
    off_window: int

    def __len__(self) -> int:
        return len(self.actions)


def collect(
    make_env: Callable[[], Any] | Sequence[Callable[[], Any]],
    policy: str,
    steps: int,
    seed: int,
    gamma: float,
) -> Demonstrations:
    """At least ``steps`` steps (whole episodes) of ``policy`` acting in ``make_env()``'s windows.

    Episode ``e`` starts with ``reset(seed=seed + e)``, so its window is drawn as a training
    environment draws one. Several ``make_env`` (one per trace): ``steps / n`` (rounded up)
    from each, in turn; the episodes are numbered across them.
    """
    if isinstance(make_env, Sequence):
        share = -(-steps // max(1, len(make_env)))
        parts = [collect(m, policy, share, seed, gamma) for m in make_env]
        first = np.cumsum([0] + [int(d.episode.max()) + 1 for d in parts[:-1]])
        return Demonstrations(
            obs=np.concatenate([d.obs for d in parts]),
            actions=np.concatenate([d.actions for d in parts]),
            masks=np.concatenate([d.masks for d in parts]),
            rewards=np.concatenate([d.rewards for d in parts]),
            returns=np.concatenate([d.returns for d in parts]),
            episode=np.concatenate([d.episode + f for d, f in zip(parts, first, strict=True)]),
            off_window=sum(d.off_window for d in parts),
        )
    from hpcgym.env.experts import Expert

    env = make_env()
    expert = Expert(env, policy)
    action_masks = env.get_wrapper_attr("action_masks")
    obs_rows: list[np.ndarray] = []
    actions: list[int] = []
    masks: list[np.ndarray] = []
    returns: list[np.ndarray] = []
    all_rewards: list[float] = []
    episodes: list[np.ndarray] = []
    e = 0
    while len(actions) < steps:
        obs, _ = env.reset(seed=seed + e)
        rewards: list[float] = []
        while True:
            mask = action_masks()
            a = expert()
            if not mask[a]:  # pragma: no cover - the expert only picks valid actions
                raise AssertionError(f"expert {policy} picked the masked action {a}")
            obs_rows.append(np.asarray(obs, dtype=np.float32))
            masks.append(mask)
            actions.append(a)
            obs, reward, terminated, truncated, _ = env.step(a)
            rewards.append(float(reward))
            if terminated or truncated:
                break
        g = np.zeros(len(rewards), dtype=np.float64)
        acc = 0.0
        for t in range(len(rewards) - 1, -1, -1):
            acc = rewards[t] + gamma * acc
            g[t] = acc
        returns.append(g)
        all_rewards += rewards
        episodes.append(np.full(len(rewards), e, dtype=np.int64))
        e += 1
    env.close()
    return Demonstrations(
        obs=np.stack(obs_rows),
        actions=np.asarray(actions, dtype=np.int64),
        masks=np.stack(masks),
        rewards=np.asarray(all_rewards, dtype=np.float32),
        returns=np.concatenate(returns).astype(np.float32),
        episode=np.concatenate(episodes),
        off_window=expert.off_window,
    )


def pretrain(
    model: Any,
    demos: Demonstrations,
    *,
    epochs: int,
    batch_size: int,
    learning_rate: float,
    seed: int,
    masked: bool,
    vf_coef: float = 0.5,
) -> dict[str, Any]:
    """Fit ``model.policy`` to ``demos`` (see the module docstring); what it reached.

    Returns:
        ``steps``, ``episodes``, ``train_accuracy``, ``held_out_accuracy``, ``loss`` (the last
        epoch's mean policy loss), ``value_loss``, ``epochs``.
    """
    import torch
    import torch.nn.functional as F

    policy = model.policy
    rng = np.random.default_rng(seed)
    n_episodes = int(demos.episode.max()) + 1
    held = rng.permutation(n_episodes)[: max(1, n_episodes // 10)] if n_episodes > 1 else np.zeros(0)
    is_held = np.isin(demos.episode, held)
    train_idx, test_idx = np.flatnonzero(~is_held), np.flatnonzero(is_held)
    obs = torch.as_tensor(demos.obs)
    actions = torch.as_tensor(demos.actions)
    returns = torch.as_tensor(demos.returns)
    optimizer = torch.optim.Adam(policy.parameters(), lr=learning_rate)
    # the value head's parameters apart from the rest: returns are in bsld units (hundreds on a
    # congested log), so one gradient-norm clip over both would leave the policy almost no step
    value_ids = {
        id(q) for q in (*policy.mlp_extractor.value_net.parameters(), *policy.value_net.parameters())
    }
    value_params = [q for q in policy.parameters() if id(q) in value_ids]
    policy_params = [q for q in policy.parameters() if id(q) not in value_ids]
    policy.set_training_mode(True)
    loss_mean = value_mean = float("nan")
    for _ in range(epochs):
        order = rng.permutation(train_idx)
        losses, value_losses = [], []
        for start in range(0, len(order), batch_size):
            idx = order[start : start + batch_size]
            if masked:
                values, log_prob, _ = policy.evaluate_actions(
                    obs[idx], actions[idx], action_masks=demos.masks[idx]
                )
            else:
                values, log_prob, _ = policy.evaluate_actions(obs[idx], actions[idx])
            policy_loss = -log_prob.mean()
            value_loss = F.mse_loss(values.flatten(), returns[idx])
            loss = policy_loss + vf_coef * value_loss
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(policy_params, 0.5)
            torch.nn.utils.clip_grad_norm_(value_params, 0.5)
            optimizer.step()
            losses.append(policy_loss.item())
            value_losses.append(value_loss.item())
        loss_mean, value_mean = float(np.mean(losses)), float(np.mean(value_losses))
    policy.set_training_mode(False)
    return {
        "steps": len(demos),
        "episodes": n_episodes,
        "held_out_episodes": len(held),
        "epochs": epochs,
        "loss": loss_mean,
        "value_loss": value_mean,
        "train_accuracy": accuracy(policy, demos, train_idx, masked),
        "held_out_accuracy": accuracy(policy, demos, test_idx, masked) if len(test_idx) else None,
        "off_window": demos.off_window,
    }


def accuracy(policy: Any, demos: Demonstrations, idx: np.ndarray, masked: bool) -> float:
    """Share of the steps ``idx`` where the policy's most likely (valid) action is the expert's."""
    import torch

    hits = 0
    with torch.no_grad():
        for start in range(0, len(idx), 4096):
            part = idx[start : start + 4096]
            obs = torch.as_tensor(demos.obs[part])
            dist = (
                policy.get_distribution(obs, action_masks=demos.masks[part])
                if masked
                else policy.get_distribution(obs)
            )
            hits += int((dist.mode().numpy() == demos.actions[part]).sum())
    return hits / max(1, len(idx))


def pick_reference(scores: dict[str, float]) -> str:
    """The preset with the lowest validation score (the first listed among equals)."""
    return min(scores, key=lambda name: scores[name])


def candidates(env_policies: Sequence[str] | None, asked: Sequence[str]) -> tuple[str, ...]:
    """The presets ``--bc-policy best`` chooses among: the mode's own (policy mode's policies,
    learned backfilling's order), else ``asked``."""
    names = tuple(env_policies) if env_policies is not None else tuple(asked)
    if not names:
        raise InvalidConfigError("--bc-candidates: name at least one dispatcher preset")
    return names


def clone(
    model: Any,
    make_env: Callable[[], Any] | Sequence[Callable[[], Any]],
    policy: str,
    *,
    steps: int,
    epochs: int,
    batch_size: int,
    learning_rate: float,
    seed: int,
    gamma: float,
    masked: bool,
) -> dict[str, Any]:
    """Collect ``policy``'s demonstrations and pretrain ``model`` on them; the summary, with seconds."""
    t0 = time.perf_counter()
    demos = collect(make_env, policy, steps, seed, gamma)
    t1 = time.perf_counter()
    summary = pretrain(
        model,
        demos,
        epochs=epochs,
        batch_size=batch_size,
        learning_rate=learning_rate,
        seed=seed,
        masked=masked,
    )
    return {
        "policy": policy,
        **summary,
        "collect_seconds": t1 - t0,
        "fit_seconds": time.perf_counter() - t1,
    }
