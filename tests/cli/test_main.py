from lemon_skills.cli import main
from tests.helpers.skills import write_skill


def test_list_json_shows_project_skill(project, project_skills, capsys):
    write_skill(project_skills, "alpha", description="Alpha things.")
    assert main(["skill", "list", "--json", "--cwd", str(project)]) == 0
    assert '"key": "alpha"' in capsys.readouterr().out
