"""The repository's nbgrader_config.py agrees with the settings the harness builds in code. Fast."""

from traitlets.config.loader import PyFileConfigLoader

from autograde.course import REPO, Course


def test_repo_nbgrader_config_matches_the_harness():
    cfg = PyFileConfigLoader("nbgrader_config.py", path=str(REPO)).load_config()
    course = Course()
    assert cfg.CourseDirectory.root == str(REPO)
    assert REPO / cfg.CourseDirectory.source_directory == course.solutions
    assert REPO / cfg.CourseDirectory.release_directory == course.release
    assert cfg.Execute.timeout == course.cell_timeout
    ignored = (REPO / ".gitignore").read_text().split()
    for d in ("submitted", "autograded", "feedback"):
        assert f"/{cfg.CourseDirectory[d + '_directory']}/" in ignored
    assert "/gradebook.db" in ignored
