//! Check 11: the recorded source commit exists in a repository the auditor names.

use super::*;

impl Validation {
    pub(super) fn check_repository(&mut self, path: &std::path::Path, records: &Records) {
        let before = self.failures.len();
        let commits: Vec<(usize, String)> = records
            .iter()
            .enumerate()
            .filter_map(|(i, (_, v))| {
                v["adamviz_source"]["commit"]
                    .as_str()
                    .map(|c| (i, c.to_owned()))
            })
            .collect();
        let known: Vec<&(usize, String)> = commits.iter().filter(|(_, c)| c != "unknown").collect();
        if known.is_empty() {
            self.checks.push(CheckReport {
                number: 11,
                name: CHECKS[10].1,
                outcome: "not_applicable",
                detail: "no record names a known source commit (built outside a git checkout, or records older than execution-request-v4)".to_owned(),
            });
            return;
        }
        match git2::Repository::open(path) {
            Err(e) => self.failure(
                Code::Git,
                None,
                &path.display().to_string(),
                format!("not a git repository: {}", e.message()),
            ),
            Ok(repository) => {
                for (index, commit) in &known {
                    let found = git2::Oid::from_str(commit)
                        .ok()
                        .and_then(|oid| repository.find_commit(oid).ok());
                    if found.is_none() {
                        self.failure(
                            Code::Git,
                            Some(index + 1),
                            "$.adamviz_source.commit",
                            format!("commit {commit} is not in {}", path.display()),
                        );
                    }
                }
            }
        }
        let first = known[0].1.clone();
        self.close(
            11,
            before,
            Code::Git,
            format!("source commit {first} found in {}", path.display()),
        );
    }
}
