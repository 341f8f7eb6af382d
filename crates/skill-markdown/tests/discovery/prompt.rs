//! The prompt: which skills it offers, in what form, and that it never holds a secret.

use super::*;

const HEADER: &str = "# Skills\n\nThe skills below are instructions for specific tasks. When a task matches a \
skill, follow it. Each skill is one `<skill>` element: its `location` is the skill's folder, and paths in the \
skill are relative to that folder; a skill without a location is built in and has no files.";

fn prompt_skills(bound: Secrets) -> Vec<LoadedSkill> {
    let sources = dirs([fixtures().join("prompt")]);
    let environment = Environment::new(HashMap::new(), "linux");
    let set = load(&sources, &SkillsConfig::default(), &environment, &BTreeMap::from([("deploy".to_owned(), bound)]));
    assert!(set.skipped.is_empty(), "{:?}", set.skipped);
    set.skills
}

#[test]
fn the_prompt_gets_available_model_invocable_skills_in_order_up_to_the_limit() {
    let skills = prompt_skills(secrets(&[("DEPLOY_TOKEN", CANARY)]));
    let states: Vec<(&str, bool)> =
        skills.iter().map(|loaded| (loaded.skill.name.as_str(), loaded.available())).collect();
    assert_eq!(
        states,
        [("notes", true), ("hidden", true), ("needs-bin", false), ("deploy", true), ("plain", true), ("extra", true)]
    );
    assert_eq!(skills[2].missing.reason(), "missing bins omniagent-fixture-absent");

    let dir = fixtures().join("prompt");
    let notes = dir.join("a-notes").display().to_string();
    let deploy = dir.join("d-deploy").display().to_string();
    let plain = dir.join("e-plain").display().to_string();
    let extra = dir.join("f-extra").display().to_string();
    let three = PromptConfig { max_injected: 3, ..PromptConfig::default() };
    let prompt = inject_into_prompt("You are helpful.\n\n", &skills, &three);
    assert_eq!(
        prompt,
        format!(
            "You are helpful.\n\n{HEADER}\n\n\
             <skill name=\"notes\" location=\"{notes}\">\nAppend to `{notes}/notes.md`; read {notes}/README.md first.\n</skill>\n\n\
             <skill name=\"deploy\" location=\"{deploy}\">\nRun `{deploy}/scripts/deploy.sh`; it reads $DEPLOY_TOKEN.\n</skill>\n\n\
             <skill name=\"plain\" location=\"{plain}\">\nPlain instructions.\n</skill>\n"
        )
    );

    let everything = inject_into_prompt("", &skills, &PromptConfig::default());
    assert!(everything.starts_with(HEADER), "{everything}");
    assert!(
        everything.ends_with(&format!(
            "\n\n<skill name=\"plain\" location=\"{plain}\">\nPlain instructions.\n</skill>\n\n\
             <skill name=\"extra\" location=\"{extra}\">\nCut.\n</skill>\n"
        )),
        "{everything}"
    );
}

#[test]
fn the_prompt_never_holds_a_bound_secret() {
    let skills = prompt_skills(secrets(&[("DEPLOY_TOKEN", CANARY)]));
    let deploy = skills.iter().find(|loaded| loaded.skill.name == "deploy").unwrap();
    let script_env: Vec<(&str, &str)> =
        deploy.script_env().map(|(name, value)| (name, value.expose_secret())).collect();
    assert_eq!(script_env, [("DEPLOY_TOKEN", CANARY)]);
    let prompt = inject_into_prompt("System.", &skills, &PromptConfig::default());
    assert!(prompt.contains("<skill name=\"deploy\""), "{prompt}");
    assert!(!prompt.contains(CANARY), "{prompt}");
    assert!(!format!("{skills:?}").contains(CANARY));
}

#[test]
fn a_skill_missing_its_secret_stays_out_of_the_prompt() {
    let skills = prompt_skills(Secrets::new());
    let deploy = skills.iter().find(|loaded| loaded.skill.name == "deploy").unwrap();
    assert_eq!(deploy.missing.reason(), "missing env DEPLOY_TOKEN; missing secret DEPLOY_TOKEN");
    assert_eq!(deploy.script_env().count(), 0);
    let prompt = inject_into_prompt("System.", &skills, &PromptConfig::default());
    assert!(!prompt.contains("deploy"), "{prompt}");
}

#[test]
fn without_skills_to_offer_the_prompt_is_unchanged() {
    let skills = prompt_skills(Secrets::new());
    let unavailable: Vec<LoadedSkill> =
        skills.into_iter().filter(|loaded| !loaded.available() || loaded.skill.disable_model_invocation).collect();
    assert_eq!(unavailable.len(), 3);
    assert_eq!(inject_into_prompt("System.\n", &unavailable, &PromptConfig::default()), "System.\n");
    assert_eq!(
        inject_into_prompt("System.\n", &[], &PromptConfig { max_injected: 0, ..PromptConfig::default() }),
        "System.\n"
    );
}
