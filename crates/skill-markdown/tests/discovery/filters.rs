//! Filters: includes, excludes and disabled skills.

use super::*;

#[test]
fn load_applies_includes_then_excludes() {
    let sources = Sources {
        packs: vec![PACK.to_owned()],
        dirs: vec![fixtures().join("discovery/first"), fixtures().join("discovery/second")],
        ..Sources::default()
    };
    let environment = Environment::new(HashMap::new(), "linux");
    let check = |config: SkillsConfig, expect: &[&str]| {
        let set = load(&sources, &config, &environment, &BTreeMap::new());
        let loaded: Vec<&str> = set.skills.iter().map(|loaded| loaded.skill.name.as_str()).collect();
        assert_eq!(loaded, expect, "{config:?}");
    };
    check(SkillsConfig::default(), &["git", "http-apis", "omniagent", "shared", "only-second"]);
    check(
        SkillsConfig { includes: strings(&["shared", "git", "nothing"]), ..SkillsConfig::default() },
        &["git", "shared"],
    );
    check(
        SkillsConfig { excludes: strings(&["git", "only-second"]), ..SkillsConfig::default() },
        &["http-apis", "omniagent", "shared"],
    );
    check(
        SkillsConfig { includes: strings(&["git", "shared"]), excludes: strings(&["git"]), ..SkillsConfig::default() },
        &["shared"],
    );
    check(
        SkillsConfig {
            includes: strings(&["git", "shared"]),
            disabled: strings(&["shared"]),
            ..SkillsConfig::default()
        },
        &["git"],
    );
}
