from __future__ import annotations

from gitimprove import config
from gitimprove.errors import NotARepositoryError
from gitimprove.git.repo import Repo, open_repo


def repo_and_config() -> tuple[Repo, config.Config]:
    repo = open_repo()
    if repo.work_tree is None:
        raise NotARepositoryError("this repository has no work tree")
    return repo, config.load(repo.work_tree, repo.config_items("improve."))
