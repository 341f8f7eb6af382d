//! Markdown skills: `SKILL.md` files as OpenClaw, ClawHub and Anthropic's Agent Skills
//! write them.
//!
//! This crate will hold the `SKILL.md` parser (YAML frontmatter and Markdown body), the
//! discovery of skills in embedded packs and directories, the include/exclude filters,
//! the requirement checks (`bins`, `anyBins`, `env`, `os`, secrets) and the injection of
//! the available skills into an agent's system prompt. It is filled by the issue that
//! brings markdown skills; until then it is empty on purpose.
