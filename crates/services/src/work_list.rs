//! The signed-in home page's work list, as a plain function: who the viewer is decides which
//! sections apply (signing only for a reviewer who is not an admin), the store reads them.

use adamviz_model::{
    account::{Account, Role},
    work_list::WorkList,
};
use adamviz_store::{
    sql::{Sql, SqlError},
    work_list::{work_list, Viewer},
};

/// The work list of `account`.
pub fn work_list_of(connection: &impl Sql, account: &Account) -> Result<WorkList, SqlError> {
    work_list(
        connection,
        Viewer {
            name: &account.name,
            may_sign: account.has(Role::Reviewer) && !account.has(Role::Admin),
        },
    )
}
