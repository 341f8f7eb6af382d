//! `omniagent skills list|info|check` and `omniagent prompt`: markdown skills as a user
//! sees them.

use serde_json::json;

use crate::{Home, json, run};

const CANARY: &str = "canary-123";

/// A skill that needs the secret `TOKEN`, bound by the config to `env:X`.
fn home_with_secret_skill() -> Home {
    let home =
        Home::new().with_config("skills:\n  packs: []\n  config:\n    deploy:\n      secrets:\n        TOKEN: env:X\n");
    home.write(
        "skills/deploy/SKILL.md",
        "---\nname: deploy\ndescription: Deploy the app\nmetadata:\n  emoji: \"🚀\"\n  requires:\n    secrets:\n      - name: TOKEN\n        description: The deploy token\n---\nRun `./deploy.sh` with $TOKEN set.\n",
    );
    home
}

#[test]
fn a_skill_without_its_secret_is_left_out_and_says_why() {
    let home = home_with_secret_skill();
    let run_unset = |args: &[&str]| {
        let mut command = home.omniagent(args);
        command.env_remove("X");
        run(command)
    };
    let (code, stdout, _) = run_unset(&["prompt", "--base", "You help."]);
    assert_eq!((code, stdout.as_str()), (0, "You help.\n"));

    let (code, stdout, _) = run_unset(&["--json", "skills", "list", "--all"]);
    assert_eq!(code, 0);
    let listing = json(&stdout);
    assert_eq!(listing["skills"][0]["available"], json!(false));
    assert_eq!(listing["skills"][0]["missing"]["secrets"], json!(["TOKEN"]));

    let (_, stdout, _) = run_unset(&["skills", "list", "--all"]);
    assert!(stdout.contains("missing secret TOKEN"), "{stdout}");
    let (_, stdout, _) = run_unset(&["skills", "list"]);
    assert_eq!(stdout, "0 skills available, 1 unavailable (--all shows them)\n");
}

#[test]
fn a_bound_secret_enables_the_skill_and_never_shows() {
    let home = home_with_secret_skill();
    let commands: &[&[&str]] = &[
        &["-vvv", "prompt"],
        &["-vvv", "--json", "prompt"],
        &["-vvv", "--json", "skills", "list", "--all"],
        &["-vvv", "skills", "list"],
        &["-vvv", "skills", "info", "deploy"],
        &["-vvv", "--json", "skills", "info", "deploy"],
        &["-vvv", "skills", "check"],
        &["-vvv", "config", "show"],
        &["-vvv", "config", "check"],
    ];
    for args in commands {
        let mut command = home.omniagent(args);
        command.env("X", CANARY);
        let (code, stdout, stderr) = run(command);
        assert_eq!(code, 0, "{args:?}: {stderr}");
        assert!(!stdout.contains(CANARY), "{args:?} printed the secret:\n{stdout}");
        assert!(!stderr.contains(CANARY), "{args:?} logged the secret:\n{stderr}");
    }
    let mut command = home.omniagent(&["prompt"]);
    command.env("X", CANARY);
    let (_, stdout, _) = run(command);
    let folder = home.path().join("skills/deploy").display().to_string();
    assert!(
        stdout.contains(&format!(
            "<skill name=\"deploy\" location=\"{folder}\">\nRun `./deploy.sh` with $TOKEN set.\n</skill>\n"
        )),
        "{stdout}"
    );

    let mut command = home.omniagent(&["--json", "skills", "info", "deploy"]);
    command.env("X", CANARY);
    let info = json(&run(command).1);
    assert_eq!(info["bound_secrets"], json!(["TOKEN"]));
    assert_eq!(info["requires"]["secrets"], json!([{"name": "TOKEN", "description": "The deploy token"}]));
}

#[test]
fn skills_list_json_has_the_design_shape() {
    let home = Home::new();
    home.write("skills/hello/SKILL.md", "---\ndescription: Say hello\n---\nHello.\n");
    home.write("skills/hello/hooks/pre.sh", "exit 0\n");
    home.write("skills/broken/SKILL.md", "no frontmatter here\n");
    let (code, stdout, _) = run(home.omniagent(&["--json", "skills", "list"]));
    assert_eq!(code, 0);
    let listing = json(&stdout);
    let hello = listing["skills"].as_array().unwrap().iter().find(|skill| skill["name"] == "hello").unwrap();
    assert_eq!(
        hello,
        &json!({
            "name": "hello",
            "description": "Say hello",
            "emoji": null,
            "homepage": null,
            "path": home.path().join("skills/hello/SKILL.md"),
            "source": "dir",
            "available": true,
            "always": false,
            "missing": {"bins": [], "anyBins": [], "env": [], "os": [], "secrets": []},
            "has_hooks": true,
            "has_scripts": false,
            "shadows": [],
            "project": false,
            "cut": null
        })
    );
    assert_eq!(
        listing["skipped"],
        json!([{
            "path": home.path().join("skills/broken/SKILL.md"),
            "line": 1,
            "reason": "no frontmatter: the file must start with a `---` line"
        }])
    );
    let (_, _, stderr) = run(home.omniagent(&["skills", "list"]));
    assert_eq!(
        stderr,
        format!(
            "skipped {}:1: no frontmatter: the file must start with a `---` line\n",
            home.path().join("skills/broken/SKILL.md").display()
        )
    );
}

#[test]
fn a_folder_skill_overrides_the_pack_and_the_first_folder_wins() {
    let home = Home::new();
    home.write("skills/git/SKILL.md", "---\ndescription: Our own git rules\n---\nMine.\n");
    home.write("first/tool/SKILL.md", "---\ndescription: The first tool\n---\nFirst.\n");
    home.write("second/tool/SKILL.md", "---\ndescription: The second tool\n---\nSecond.\n");
    let (code, stdout, _) =
        run(home.omniagent(&["--json", "skills", "list", "--all", "--path", "first", "--path", "second"]));
    assert_eq!(code, 0);
    let listing = json(&stdout);
    let skill =
        |name: &str| listing["skills"].as_array().unwrap().iter().find(|skill| skill["name"] == name).unwrap().clone();
    assert_eq!(skill("git")["source"], json!("dir"));
    assert_eq!(skill("git")["description"], json!("Our own git rules"));
    assert_eq!(skill("git")["shadows"], json!(["pack:omniagent-skills/git/SKILL.md"]));
    assert_eq!(skill("tool")["description"], json!("The first tool"));
    assert_eq!(skill("tool")["shadows"], json!(["second/tool/SKILL.md"]));
    assert_eq!(skill("http-apis")["source"], json!("pack"));

    let (_, stdout, _) = run(home.omniagent(&["skills", "info", "git"]));
    assert!(stdout.contains("shadows      pack:omniagent-skills/git/SKILL.md\n"), "{stdout}");

    let (_, stdout, _) = run(home.omniagent(&["--json", "skills", "list", "--all", "--no-default-paths"]));
    let listing = json(&stdout);
    let names: Vec<&str> =
        listing["skills"].as_array().unwrap().iter().map(|skill| skill["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["git", "http-apis", "omniagent"], "--no-default-paths keeps the packs");
}

#[test]
fn includes_then_excludes_and_the_deprecated_alias() {
    let check = |skills_config: &str, expect: &[&str], expect_stderr: &str| {
        let home = Home::new().with_config(&format!("skills:\n{skills_config}"));
        let (code, stdout, stderr) = run(home.omniagent(&["--json", "skills", "list", "--all"]));
        assert_eq!(code, 0, "{stderr}");
        let names: Vec<String> = json(&stdout)["skills"]
            .as_array()
            .unwrap()
            .iter()
            .map(|skill| skill["name"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(names, expect, "{skills_config}");
        assert_eq!(stderr, expect_stderr, "{skills_config}");
    };
    check("  includes: [git, omniagent]\n", &["git", "omniagent"], "");
    check("  includes: [git, omniagent]\n  excludes: [git]\n", &["omniagent"], "");
    check(
        "  disabled: [git]\n",
        &["http-apis", "omniagent"],
        " WARN skills.disabled is deprecated; use skills.excludes\n",
    );
    check("  enabled: false\n", &[], "");
    check("  packs: []\n", &[], "");
}

#[test]
fn skills_check_exits_1_with_install_hints() {
    let home = Home::new().with_config("skills: {packs: []}\n");
    home.write(
        "skills/gh/SKILL.md",
        "---\nname: gh\ndescription: GitHub\nmetadata: {\"openclaw\": {\"requires\": {\"bins\": [\"omniagent-test-no-such-bin\"]}, \"install\": [{\"kind\": \"brew\", \"formula\": \"gh\"}, {\"kind\": \"apt\", \"package\": \"gh\"}, {\"kind\": \"pkgx\", \"package\": \"gh\"}]}}\n---\n",
    );
    home.write("skills/plain/SKILL.md", "---\ndescription: Nothing needed\n---\n");
    let (code, stdout, _) = run(home.omniagent(&["skills", "check"]));
    assert_eq!(code, 1);
    assert_eq!(
        stdout,
        "✗ gh: missing bins omniagent-test-no-such-bin\n    brew: brew install gh\n    apt: sudo apt-get install gh\n\
         ✓ plain\n2 skills checked, 1 with unmet requirements\n"
    );
    let (_, stdout, _) = run(home.omniagent(&["skills", "info", "gh"]));
    assert!(stdout.contains("warning      install spec 3: unknown kind `pkgx`; dropped\n"), "{stdout}");

    std::fs::remove_dir_all(home.path().join("skills/gh")).unwrap();
    let (code, _, _) = run(home.omniagent(&["skills", "check"]));
    assert_eq!(code, 0);
}

#[test]
fn skills_info_describes_one_skill_and_refuses_unknown_names() {
    let home = Home::new();
    let (code, stdout, _) = run(home.omniagent(&["skills", "info", "git"]));
    assert_eq!(code, 0);
    assert!(stdout.starts_with("🌿 git  "), "{stdout}");
    assert!(
        stdout.contains("path         pack:omniagent-skills/git/SKILL.md\nsource       pack omniagent-skills\n"),
        "{stdout}"
    );

    let (code, stdout, stderr) = run(home.omniagent(&["skills", "info", "gti"]));
    assert_eq!((code, stdout.as_str()), (1, ""));
    assert_eq!(
        stderr,
        "error: unknown skill `gti`\nhint: did you mean `git`? `omniagent skills list --all` shows every skill\n"
    );
}

#[test]
fn prompt_appends_available_skills_under_headings() {
    let home = Home::new().with_config("skills:\n  includes: [git, http-apis, demo]\n  max_injected: 2\n");
    home.write("skills/demo/SKILL.md", "---\ndescription: Demo\n---\nFiles are in {baseDir}.\n");
    let (code, stdout, stderr) = run(home.omniagent(&["prompt", "--base", "You are an agent."]));
    assert_eq!(code, 0);
    assert!(stdout.starts_with("You are an agent.\n\n# Skills\n\n"), "{stdout}");
    assert!(stdout.contains("\n\n<skill name=\"git\">\n"), "a pack skill has no location: {stdout}");
    assert!(stdout.contains("\n\n<skill name=\"http-apis\">\n"), "{stdout}");
    assert!(!stdout.contains("<skill name=\"demo\""), "at most max_injected skills: {stdout}");
    assert!(
        stderr.contains("warning: skill `demo`: left out of the prompt: more skills than skills.max_injected (2)\n"),
        "{stderr}"
    );

    let home = Home::new().with_config("skills:\n  packs: []\n");
    home.write("skills/demo/SKILL.md", "---\ndescription: Demo\n---\nFiles are in {baseDir}.\n");
    let (_, stdout, _) = run(home.omniagent(&["--json", "prompt"]));
    let prompt = json(&stdout);
    assert_eq!(prompt["skills"], json!(["demo"]));
    assert!(
        prompt["prompt"].as_str().unwrap().ends_with(&format!(
            "location=\"{folder}\">\nFiles are in {folder}.\n</skill>\n",
            folder = home.path().join("skills/demo").display()
        )),
        "{prompt}"
    );
}
