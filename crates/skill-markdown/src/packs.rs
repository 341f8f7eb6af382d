//! Skill packs embedded in the binary: skills that are there without any folder.

/// A named set of skills compiled in.
#[derive(Debug)]
pub struct Pack {
    /// The pack's name, as `skills.packs` lists it.
    pub name: &'static str,
    /// Each skill's folder name and `SKILL.md` text.
    pub skills: &'static [(&'static str, &'static str)],
}

/// Every pack this build carries.
pub const PACKS: &[Pack] = &[Pack {
    name: "omniagent-skills",
    skills: &[
        ("git", include_str!("../packs/omniagent-skills/git/SKILL.md")),
        ("http-apis", include_str!("../packs/omniagent-skills/http-apis/SKILL.md")),
        ("omniagent", include_str!("../packs/omniagent-skills/omniagent/SKILL.md")),
    ],
}];

/// The pack called `name`.
pub(crate) fn pack(name: &str) -> Option<&'static Pack> {
    PACKS.iter().find(|pack| pack.name == name)
}
