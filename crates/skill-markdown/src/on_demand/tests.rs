use std::collections::BTreeMap;
use std::path::Path;

use skill_core::Agent;

use super::read::MAX_READ_BYTES;
use super::*;
use crate::{Environment, SkillsConfig, Sources, load};

/// A folder of skills: `hello` (with files), `needs-bin` (unavailable) and `manual`
/// (no model invocation), beside the `omniagent-skills` pack.
fn skills(root: &Path) -> Vec<LoadedSkill> {
    let hello = root.join("hello");
    std::fs::create_dir_all(hello.join("scripts")).unwrap();
    std::fs::create_dir_all(hello.join(".git")).unwrap();
    std::fs::write(
        hello.join("SKILL.md"),
        "---\nname: hello\ndescription: Greets\n---\n# Hello\n\nRun {baseDir}/scripts/run.sh\n",
    )
    .unwrap();
    std::fs::write(hello.join("scripts/run.sh"), "echo hi\n").unwrap();
    std::fs::write(hello.join(".git/config"), "hidden").unwrap();
    std::fs::write(hello.join("logo.png"), [0x89, b'P', b'N', b'G', 0x00, 0x01]).unwrap();
    std::fs::write(hello.join("data.bin"), [0xff, 0xfe, 0x00]).unwrap();
    for (name, extra) in [
        ("needs-bin", "metadata: {\"openclaw\": {\"requires\": {\"bins\": [\"no-such-program-here\"]}}}\n"),
        ("manual", "disable-model-invocation: true\n"),
    ] {
        std::fs::create_dir_all(root.join(name)).unwrap();
        std::fs::write(
            root.join(name).join("SKILL.md"),
            format!("---\nname: {name}\ndescription: d\n{extra}---\nBody.\n"),
        )
        .unwrap();
    }
    let sources =
        Sources { packs: vec!["omniagent-skills".to_owned()], dirs: vec![root.to_owned()], ..Sources::default() };
    load(&sources, &SkillsConfig::default(), &Environment::current(), &BTreeMap::new()).skills
}

async fn agent(tools: SkillTools) -> Agent {
    let agent = Agent::builder().with_compiled_skill(tools).build();
    assert_eq!(agent.init_compiled_skills().await.loaded, [SKILL_TOOLS_NAME]);
    agent
}

fn text(output: &ToolOutput) -> &str {
    match &output.content[0] {
        Content::Text { text, .. } => text,
        other => panic!("not text: {other:?}"),
    }
}

#[tokio::test]
async fn the_name_is_an_enum_of_the_skills_a_model_may_use() {
    let root = tempfile::tempdir().unwrap();
    let agent = agent(SkillTools::new(&skills(root.path()), [])).await;
    let names: Vec<String> = agent.tools().iter().map(|tool| tool.name().to_owned()).collect();
    assert_eq!(names, ["skills__activate", "skills__read"]);
    let activate = agent.find_tool("skills__activate").unwrap();
    let allowed = activate.input_schema()["properties"]["name"]["enum"].clone();
    let allowed: Vec<&str> = allowed.as_array().unwrap().iter().map(|name| name.as_str().unwrap()).collect();
    assert!(allowed.contains(&"hello") && allowed.contains(&"git"), "{allowed:?}");
    assert!(!allowed.contains(&"needs-bin") && !allowed.contains(&"manual"), "{allowed:?}");
    let error = agent.call_tool("skills__activate", json!({"name": "needs-bin"})).await.unwrap_err();
    assert!(error.to_string().starts_with("invalid arguments for `skills__activate`: /name:"), "{error}");
    assert!(SkillTools::new(&[], []).tools().is_empty(), "no skill, no tools");
}

#[tokio::test]
async fn a_body_is_given_once_with_the_skills_files() {
    let root = tempfile::tempdir().unwrap();
    let agent = agent(SkillTools::new(&skills(root.path()), [])).await;
    let folder = root.path().join("hello").display().to_string();
    let first = agent.call_tool("skills__activate", json!({"name": "hello"})).await.unwrap();
    assert!(!first.is_error);
    assert_eq!(
        text(&first),
        format!(
            "<skill name=\"hello\" location=\"{folder}\">\nThis skill's folder is {folder}; paths in it are relative \
             to that folder. Read its files with skills__read.\n\n# Hello\n\nRun {folder}/scripts/run.sh\n\n\
             <skill_files>\ndata.bin\nlogo.png\nscripts/run.sh\n</skill_files>\n</skill>"
        )
    );
    assert_eq!(
        first.structured_content,
        Some(json!({
            "name": "hello", "location": folder, "already_active": false,
            "files": ["data.bin", "logo.png", "scripts/run.sh"], "more_files": 0
        }))
    );
    let again = agent.call_tool("skills__activate", json!({"name": "hello"})).await.unwrap();
    assert_eq!(
        text(&again),
        "Skill `hello` is already active: its instructions were given earlier. If they are no longer in your \
         context, call skills__activate with \"reload\": true."
    );
    assert_eq!(again.structured_content.as_ref().unwrap()["already_active"], json!(true));
    let reloaded = agent.call_tool("skills__activate", json!({"name": "hello", "reload": true})).await.unwrap();
    assert_eq!(text(&reloaded), text(&first), "asked for, the body again");
    assert_eq!(reloaded.structured_content.as_ref().unwrap()["already_active"], json!(true));

    let git = agent.call_tool("skills__activate", json!({"name": "git"})).await.unwrap();
    assert!(text(&git).starts_with("<skill name=\"git\">\nThis skill is built in"), "{}", text(&git));
    assert_eq!(git.structured_content.as_ref().unwrap()["files"], json!([]));

    let other_agent = agent_of(root.path()).await;
    let elsewhere = other_agent.call_tool("skills__activate", json!({"name": "hello"})).await.unwrap();
    assert!(text(&elsewhere).starts_with("<skill name=\"hello\""), "another agent gets the body again");
}

async fn agent_of(root: &Path) -> Agent {
    agent(SkillTools::new(&skills(root), [])).await
}

#[tokio::test]
async fn files_are_read_and_refusals_say_why() {
    let root = tempfile::tempdir().unwrap();
    let loaded = skills(root.path());
    let hello = root.path().join("hello");
    std::fs::write(hello.join("token.txt"), "s3cr3t").unwrap();
    std::fs::write(hello.join("big.md"), "x".repeat(MAX_READ_BYTES as usize + 1)).unwrap();
    std::fs::write(root.path().join("outside.md"), "outside").unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(root.path().join("outside.md"), hello.join("escape.md")).unwrap();
    let agent = agent(SkillTools::new(&loaded, [hello.join("token.txt")])).await;
    let read = |path: &str| {
        let agent = agent.clone();
        let path = path.to_owned();
        async move { agent.call_tool("skills__read", json!({"name": "hello", "path": path})).await.unwrap() }
    };
    let script = read("scripts/run.sh").await;
    assert_eq!(text(&script), "echo hi\n");
    assert_eq!(
        script.structured_content,
        Some(
            json!({"name": "hello", "path": "scripts/run.sh", "size": 8, "binary": false, "mime_type": "text/x-shellscript"})
        )
    );
    let data = read("data.bin").await;
    assert_eq!(
        text(&data),
        "`data.bin` is a binary file (3 bytes, application/octet-stream); its bytes are not shown as text"
    );
    assert_eq!(data.content.len(), 1);
    let logo = read("logo.png").await;
    assert!(matches!(&logo.content[1], Content::Image { mime_type, .. } if mime_type == "image/png"), "{logo:?}");

    let refusals = [
        (
            "/etc/passwd",
            "`/etc/passwd` is refused: give a path relative to the folder of skill `hello`, not an absolute one",
        ),
        ("../outside.md", "`../outside.md` is refused: `..` may not appear in a path"),
        (".git/config", "`.git/config` is refused: hidden names (starting with `.`) are never read"),
        ("token.txt", "`token.txt` is refused: it is one of the agent's private files"),
        ("big.md", "`big.md` is 262145 bytes, over the limit of 262144 bytes (256 KiB) that skills__read gives"),
        ("nope.md", "skill `hello` has no file `nope.md`"),
        #[cfg(unix)]
        ("escape.md", "`escape.md` is refused: it leads outside the folder of skill `hello`"),
    ];
    for (path, expect) in refusals {
        let output = read(path).await;
        assert!(output.is_error, "{path}");
        assert_eq!(text(&output), expect);
    }
    let pack = agent.call_tool("skills__read", json!({"name": "git", "path": "SKILL.md"})).await.unwrap();
    assert!(pack.is_error);
    assert_eq!(text(&pack), "skill `git` is built in (pack `omniagent-skills`): it has no folder, so no files to read");

    let listed = agent.call_tool("skills__activate", json!({"name": "hello"})).await.unwrap();
    let files = &listed.structured_content.as_ref().unwrap()["files"];
    assert!(!files.as_array().unwrap().contains(&json!("token.txt")), "a private file is not listed: {files}");
    assert!(!files.as_array().unwrap().contains(&json!("escape.md")), "a link is not listed: {files}");
}

#[test]
fn the_file_list_is_bounded() {
    let root = tempfile::tempdir().unwrap();
    for file_idx in 0..MAX_LISTED_FILES + 5 {
        std::fs::write(root.path().join(format!("f{file_idx:03}.md")), "x").unwrap();
    }
    let folder = Folder::new(root.path(), Arc::from([]));
    let (files, more) = listed_files(&folder);
    assert_eq!((files.len(), more), (MAX_LISTED_FILES, 5));
    assert_eq!(files[0], "f000.md");
}
