//! Data cuts: a later delivery of a dataset is a `datasets` row with the same dataset name (the
//! XPT member or Dataset-JSON name; a CSV's file name), other bytes, uploaded later. The home
//! page's "newer cut" section, the history's two data-cut filters and a revision page's
//! "Re-run on the new data" read it through the conditions here.

use crate::sql::{Sql, SqlError};
use crate::sql_params;

/// SQL: a newer cut exists of the dataset of the spec named by `spec_hash` (a column or
/// expression of the enclosing statement).
pub fn newer_cut_exists(spec_hash: &str) -> String {
    format!(
        "EXISTS (
             SELECT 1 FROM specs cut_s
             JOIN datasets cut_d ON cut_d.content_hash = cut_s.content_hash
             JOIN datasets cut_n ON lower(coalesce(cut_n.dataset_name, cut_n.file_name))
                                  = lower(coalesce(cut_d.dataset_name, cut_d.file_name))
                                AND cut_n.content_hash <> cut_d.content_hash
                                AND cut_n.uploaded_at > cut_d.uploaded_at
             WHERE cut_s.spec_hash = {spec_hash})"
    )
}

/// SQL: revision `r` revises one made on another dataset of the same name (a re-run on a newer
/// data cut).
pub const REVISED_FOR_NEWER_CUT: &str = "r.parent_id IS NOT NULL AND EXISTS (
         SELECT 1 FROM revisions cut_p
         JOIN specs cut_ps ON cut_ps.spec_hash = cut_p.spec_hash
         JOIN specs cut_cs ON cut_cs.spec_hash = r.spec_hash
         JOIN datasets cut_pd ON cut_pd.content_hash = cut_ps.content_hash
         JOIN datasets cut_cd ON cut_cd.content_hash = cut_cs.content_hash
         WHERE cut_p.id = r.parent_id
           AND cut_pd.content_hash <> cut_cd.content_hash
           AND lower(coalesce(cut_pd.dataset_name, cut_pd.file_name))
             = lower(coalesce(cut_cd.dataset_name, cut_cd.file_name)))";

/// The newest later delivery of dataset `content_hash`: (content hash, file name, uploaded at).
pub fn newer_cut(
    connection: &impl Sql,
    content_hash: &str,
) -> Result<Option<(String, String, String)>, SqlError> {
    connection
        .query_opt(
            "SELECT n.content_hash, n.file_name, n.uploaded_at
             FROM datasets d
             JOIN datasets n ON lower(coalesce(n.dataset_name, n.file_name))
                              = lower(coalesce(d.dataset_name, d.file_name))
                            AND n.content_hash <> d.content_hash
                            AND n.uploaded_at > d.uploaded_at
             WHERE d.content_hash = ?1
             ORDER BY n.uploaded_at DESC, n.content_hash LIMIT 1",
            sql_params![content_hash.to_owned()],
        )?
        .map(|row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
        .transpose()
}
