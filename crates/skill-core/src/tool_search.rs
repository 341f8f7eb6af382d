//! Finding tools by words: a [`ToolIndex`] of an agent's tools ranks them for a query
//! by the words of their names, titles and descriptions, for a model (or a person) that
//! cannot look through every tool.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! use skill_core::{Agent, MemorySkill, ToolIndex};
//!
//! let agent = Agent::builder().with_compiled_skill(MemorySkill::new()).build();
//! agent.init_compiled_skills().await;
//! let index = ToolIndex::of(&agent);
//! let found: Vec<&str> = index.search("forget a note").iter().map(|tool| tool.name()).collect();
//! assert_eq!(found.first(), Some(&"memory__forget"));
//! # });
//! ```

use crate::{Agent, RegisteredTool};

/// The words of an agent's tools as they were when it was made, to search them.
pub struct ToolIndex {
    agent: Agent,
    /// The version of the agent's tool list ([`crate::Changes::tools`]).
    version: u64,
    tools: Vec<RegisteredTool>,
    /// Of each tool, the words of its name, and those of its title and description.
    words: Vec<(Vec<String>, Vec<String>)>,
}

impl std::fmt::Debug for ToolIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolIndex").field("agent", &self.agent.name()).field("tools", &self.tools.len()).finish()
    }
}

impl ToolIndex {
    /// The words of `agent`'s tools as they are now.
    pub fn of(agent: &Agent) -> Self {
        // The version first: should the tools change meanwhile, the index is only
        // taken again.
        let version = agent.changes().borrow().tools;
        let tools = agent.tools();
        let words = tools
            .iter()
            .map(|tool| {
                let text = words(tool.title().unwrap_or_default()).chain(words(tool.description()));
                (words(tool.name()).collect(), text.collect())
            })
            .collect();
        Self { agent: agent.clone(), version, tools, words }
    }

    /// Whether this is the index of `agent`'s tools as they are now (not of another
    /// agent, nor of its tools before they changed).
    pub fn is_current(&self, agent: &Agent) -> bool {
        self.agent.is(agent) && agent.changes().borrow().tools == self.version
    }

    /// The tools that match any word of `query`, best first. A word counts most as a
    /// word of a tool's name, less as the start of one, least as the start of a word of
    /// its title or description; and the fewer tools it matches, the more it counts.
    /// Case, a plural `s` and small words (`a`, `the`, `of`, ...) do not count.
    pub fn search(&self, query: &str) -> Vec<&RegisteredTool> {
        let terms: Vec<String> = words(query).filter(|term| !STOP_WORDS.contains(&term.as_str())).collect();
        rank(&self.words, &terms).into_iter().map(|found| &self.tools[found]).collect()
    }
}

/// The indexes of the tools that match any of `terms`, best first (equals by the length
/// of their names, then in the order given), each tool given as the words of its name
/// and the words of its title and description. A term counts most as a word of a name,
/// less as the start of one, least as the start of a word of the text; and the fewer
/// tools it matches, the more it counts (its inverse document frequency), so `issues`
/// weighs more than `repository`.
fn rank(tools: &[(Vec<String>, Vec<String>)], terms: &[String]) -> Vec<usize> {
    let levels: Vec<Vec<u32>> = tools
        .iter()
        .map(|(name, text)| {
            terms
                .iter()
                .map(|term| {
                    let starts = |word: &String| word.starts_with(term.as_str());
                    if name.contains(term) {
                        4
                    } else if name.iter().any(starts) {
                        2
                    } else {
                        u32::from(text.iter().any(starts))
                    }
                })
                .collect()
        })
        .collect();
    let weights: Vec<f64> = (0..terms.len())
        .map(|term| {
            // BM25's, above 0 even for a term that every tool matches.
            let matching = levels.iter().filter(|levels| levels[term] > 0).count() as f64;
            (1.0 + (tools.len() as f64 - matching + 0.5) / (matching + 0.5)).ln()
        })
        .collect();
    let mut scored: Vec<(f64, usize)> = levels
        .iter()
        .enumerate()
        .map(|(index, levels)| {
            (levels.iter().zip(&weights).map(|(level, weight)| f64::from(*level) * weight).sum(), index)
        })
        .filter(|(score, _)| *score > 0.0)
        .collect();
    // Among equals, the shorter name first: less of it is about something else.
    scored.sort_by(|(a, first), (b, second)| b.total_cmp(a).then(tools[*first].0.len().cmp(&tools[*second].0.len())));
    scored.into_iter().map(|(_, index)| index).collect()
}

/// Words too common to tell tools apart, left out of a query.
const STOP_WORDS: &[&str] =
    &["a", "all", "an", "and", "by", "for", "from", "i", "in", "it", "me", "my", "of", "on", "or", "the", "to", "with"];

/// The words of `text`, in lower case and without a plural `s` (`issues` is `issue`):
/// runs of letters and digits, with a run in camel case (`listIssues`) split where a
/// capital follows a small letter.
fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric()).filter(|run| !run.is_empty()).flat_map(|run| {
        let mut words = Vec::new();
        let mut word = String::new();
        let mut after_small = false;
        for c in run.chars() {
            if c.is_uppercase() && after_small {
                words.push(std::mem::take(&mut word));
            }
            after_small = c.is_lowercase() || c.is_ascii_digit();
            word.extend(c.to_lowercase());
        }
        words.push(word);
        words.into_iter().map(singular)
    })
}

/// `word` without a plural `s` (not of `ss`, nor of a word of three letters or fewer).
fn singular(mut word: String) -> String {
    if word.len() > 3 && word.ends_with('s') && !word.ends_with("ss") {
        word.pop();
    }
    word
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_names_descriptions_and_camel_case() {
        let split = |text| words(text).collect::<Vec<_>>();
        assert_eq!(split("github__issues_list-for_repos"), ["github", "issue", "list", "for", "repo"]);
        assert_eq!(split("listIssues for a class."), ["list", "issue", "for", "a", "class"]);
        assert_eq!(split("getHTTPStatus v2Api"), ["get", "httpstatu", "v2", "api"]);
        assert_eq!(split("  "), Vec::<String>::new());
    }

    #[test]
    fn names_count_more_than_text_and_rare_words_more_than_common_ones() {
        let tool = |name: &str, text: &str| (words(name).collect(), words(text).collect());
        let tools = [
            tool("github__repos_get", "Gets a repository."),
            tool("github__issues_list_for_repo", "Lists the issues of a repository."),
            tool("github__repos_list_for_org", "Lists the repositories of an organization."),
            tool("github__issues_listing", ""),
            tool("github__pulls_list", "Lists the pull requests of a repository, and their issues."),
        ];
        let terms: Vec<String> = words("list issues").collect();
        // Both words in the name, then `issue` in the name and `list` starting a word
        // of it, then `issue` in the text, then `list` alone.
        assert_eq!(rank(&tools, &terms), [1, 3, 4, 2]);
        assert_eq!(rank(&tools, &words("zebra").collect::<Vec<_>>()), Vec::<usize>::new());
        // A word every tool has still finds them.
        assert_eq!(rank(&tools[..1], &words("repos").collect::<Vec<_>>()), [0]);
    }
}
