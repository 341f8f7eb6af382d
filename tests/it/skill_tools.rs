//! `omniagent tools call skills__activate` and `skills__read`: markdown skills loaded on
//! demand, and every path `skills__read` refuses.

use serde_json::json;

use crate::{Home, json, run};

/// A home with one skill, `hello`, in its `skills/` folder: a script, a reference too
/// large to read, a hidden folder, a link out of the folder, a binary file and a file
/// that is the agent's `file:` secret; and `stash`, a skill in a private folder of the
/// home (`extra/`), through `skills.paths`.
pub(crate) fn skills_home() -> Home {
    let home = Home::new();
    let token = home.write("skills/hello/token.txt", "s3cr3t-token");
    home.write(
        "skills/hello/SKILL.md",
        "---\nname: hello\ndescription: Greet people warmly\n---\n# Hello\n\nRun `{baseDir}/scripts/greet.sh NAME`.\n",
    );
    home.write("skills/hello/scripts/greet.sh", "echo \"hello $1\"\n");
    home.write("skills/hello/references/huge.md", &"x".repeat(256 * 1024 + 1));
    home.write("skills/hello/.secrets/key", "hidden");
    home.write("outside.txt", "not the skill's");
    std::os::unix::fs::symlink(home.path().join("outside.txt"), home.path().join("skills/hello/escape.txt")).unwrap();
    std::fs::write(home.path().join("skills/hello/blob.bin"), [0u8, 159, 146, 150]).unwrap();
    home.write("extra/stash/SKILL.md", "---\nname: stash\ndescription: Kept in the home\n---\nStash.\n");
    let config = format!(
        "storage: {{backend: memory}}\nskills:\n  packs: []\n  paths: ['{}']\n\
         compiled:\n  memory:\n    secrets:\n      TOKEN: 'file:{}'\n",
        home_path(&home, "extra"),
        token.display()
    );
    home.with_config(&config)
}

fn home_path(home: &Home, name: &str) -> String {
    home.path().join(name).display().to_string()
}

/// `omniagent [--json] tools call TOOL --args ARGS` in `home`: (exit code, stdout, stderr).
fn call(home: &Home, json: bool, tool: &str, arguments: serde_json::Value) -> (i32, String, String) {
    let arguments = arguments.to_string();
    let mut args = vec!["tools", "call", tool, "--args", arguments.as_str()];
    if json {
        args.insert(0, "--json");
    }
    run(home.omniagent(&args))
}

#[test]
fn activate_gives_the_body_in_its_delimiters_with_the_files() {
    let home = skills_home();
    let folder = home_path(&home, "skills/hello");
    let (code, stdout, stderr) = call(&home, false, "skills__activate", json!({"name": "hello"}));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stdout,
        format!(
            "<skill name=\"hello\" location=\"{folder}\">\nThis skill's folder is {folder}; paths in it are relative \
             to that folder. Read its files with skills__read.\n\n# Hello\n\nRun `{folder}/scripts/greet.sh NAME`.\n\n\
             <skill_files>\nblob.bin\nreferences/huge.md\nscripts/greet.sh\n</skill_files>\n</skill>\n"
        ),
        "no hidden file, no link, no private file listed"
    );
    // Each CLI run is an agent of its own: the body again, and the same structure.
    let (code, stdout, _) = call(&home, true, "skills__activate", json!({"name": "hello"}));
    assert_eq!(code, 0);
    let result = json(&stdout);
    assert!(result["content"][0]["text"].as_str().unwrap().starts_with("<skill name=\"hello\""), "{result}");
    assert_eq!(
        result["structuredContent"],
        json!({
            "name": "hello", "location": folder, "already_active": false,
            "files": ["blob.bin", "references/huge.md", "scripts/greet.sh"], "more_files": 0
        })
    );
}

#[test]
fn the_tools_list_names_the_skills_a_model_may_activate() {
    let home = skills_home();
    let (code, stdout, stderr) = run(home.omniagent(&["--json", "tools", "list"]));
    assert_eq!(code, 0, "{stderr}");
    let listing = json(&stdout);
    let tools = listing["tools"].as_array().unwrap();
    let activate = tools.iter().find(|tool| tool["name"] == "skills__activate").unwrap();
    assert_eq!(activate["source"], json!({"kind": "skill", "skill": "skills", "tool": "activate"}));
    assert_eq!(activate["input_schema"]["properties"]["name"]["enum"], json!(["hello", "stash"]));
    let read = tools.iter().find(|tool| tool["name"] == "skills__read").unwrap();
    assert_eq!(read["input_schema"]["required"], json!(["name", "path"]));

    let (code, _, stderr) = call(&home, false, "skills__activate", json!({"name": "nobody"}));
    assert_eq!(code, 2);
    assert!(
        stderr.starts_with("error: invalid arguments for `skills__activate`: /name: \"nobody\" is not one of"),
        "{stderr}"
    );
}

#[test]
fn read_gives_a_file_of_the_skills_folder() {
    let home = skills_home();
    let (code, stdout, stderr) =
        call(&home, false, "skills__read", json!({"name": "hello", "path": "scripts/greet.sh"}));
    assert_eq!((code, stdout.as_str()), (0, "echo \"hello $1\"\n"), "{stderr}");
    let (code, stdout, _) = call(&home, true, "skills__read", json!({"name": "hello", "path": "blob.bin"}));
    assert_eq!(code, 0);
    assert_eq!(
        json(&stdout),
        json!({
            "content": [{"type": "text", "text": "`blob.bin` is a binary file (4 bytes, application/octet-stream); its bytes are not shown as text"}],
            "structuredContent": {"name": "hello", "path": "blob.bin", "size": 4, "binary": true, "mime_type": "application/octet-stream"},
            "isError": false
        })
    );
}

#[test]
fn read_refuses_every_path_out_of_bounds_and_says_why() {
    let home = skills_home();
    let refusals = [
        ("hello", "../../config.yaml", "`../../config.yaml` is refused: `..` may not appear in a path"),
        (
            "hello",
            "scripts/../../../outside.txt",
            "`scripts/../../../outside.txt` is refused: `..` may not appear in a path",
        ),
        ("hello", "escape.txt", "`escape.txt` is refused: it leads outside the folder of skill `hello`"),
        ("hello", ".secrets/key", "`.secrets/key` is refused: hidden names (starting with `.`) are never read"),
        (
            "hello",
            "references/huge.md",
            "`references/huge.md` is 262145 bytes, over the limit of 262144 bytes (256 KiB) that skills__read gives",
        ),
        ("hello", "token.txt", "`token.txt` is refused: it is one of the agent's private files"),
        ("stash", "SKILL.md", "`SKILL.md` is refused: it is one of the agent's private files"),
    ];
    for (skill, path, reason) in refusals {
        let (code, stdout, stderr) = call(&home, false, "skills__read", json!({"name": skill, "path": path}));
        assert_eq!(
            (code, stdout.as_str(), stderr.as_str()),
            (1, "", format!("tool error: {reason}\n").as_str()),
            "{path}"
        );
    }
    let absolute = home_path(&home, "skills/hello/SKILL.md");
    let (code, _, stderr) = call(&home, false, "skills__read", json!({"name": "hello", "path": absolute}));
    assert_eq!(code, 1);
    assert_eq!(
        stderr,
        format!(
            "tool error: `{absolute}` is refused: give a path relative to the folder of skill `hello`, not an absolute one\n"
        )
    );
}

#[test]
fn the_tools_can_be_turned_off() {
    let home = skills_home();
    let config = std::fs::read_to_string(home.path().join("config.yaml")).unwrap();
    home.write("config.yaml", &config.replace("skills:\n", "skills:\n  tools: false\n"));
    let (code, stdout, _) = run(home.omniagent(&["--json", "tools", "list"]));
    assert_eq!(code, 0);
    let listing = json(&stdout);
    let names: Vec<&str> =
        listing["tools"].as_array().unwrap().iter().map(|tool| tool["name"].as_str().unwrap()).collect();
    assert!(!names.iter().any(|name| name.starts_with("skills__")), "{names:?}");
    let (code, _, stderr) = call(&home, false, "skills__activate", json!({"name": "hello"}));
    assert_eq!(code, 2);
    assert!(stderr.starts_with("error: unknown tool `skills__activate`"), "{stderr}");
}

#[test]
fn calling_a_skill_tool_starts_no_other_skill() {
    let home = skills_home();
    let config = std::fs::read_to_string(home.path().join("config.yaml")).unwrap();
    home.write("config.yaml", &format!("{config}mcp:\n  servers:\n    broken:\n      command: /nonexistent/server\n"));
    let (code, _, stderr) = call(&home, false, "skills__activate", json!({"name": "hello"}));
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("broken"), "the MCP server was not started: {stderr}");
    let (code, _, stderr) = call(&home, false, "activate", json!({"name": "hello"}));
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("skill=broken"), "a bare name starts every skill, the broken one too: {stderr}");
}
