//! Listings: employees (paged as PageHelper pages), asset numbers, lent locks.

use super::*;

/// A query parameter that is present but not acceptable: `40000`, the list's one
/// parameter code, with a message saying what is wrong rather than "parameter empty".
pub(super) fn bad_parameter(message: String, value: &str) -> Failure {
    let cause = format!("{message} (is {value:?})");
    Failure::with_message(E::ParameterEmpty, message, cause)
}

/// A required positive `int32` query parameter.
pub(super) fn page_parameter(call: &Call, name: &str) -> Result<i32, Failure> {
    let value = call
        .query(name)
        .ok_or_else(|| empty(format!("{name} is required")))?;
    match value.parse::<i32>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(bad_parameter(
            format!("{name} must be a positive 32-bit integer"),
            value,
        )),
    }
}

/// One page of the enterprise's employees, oldest first, filtered by department and by
/// a keyword found (case-insensitively) in the name or the account.
pub(crate) fn list_members(sim: &Db, call: &Call) -> Result<m::MemberPage, Failure> {
    let page_num = page_parameter(call, "pageNum")?;
    let page_size = page_parameter(call, "pageSize")?;
    if page_size > MAX_PAGE_SIZE {
        return Err(bad_parameter(
            format!("pageSize must be at most {MAX_PAGE_SIZE}"),
            &page_size.to_string(),
        ));
    }
    let department = match call.query("departmentId") {
        None => None,
        Some(value) => Some(value.parse::<i64>().map_err(|_| {
            bad_parameter("departmentId must be a 64-bit integer".to_string(), value)
        })?),
    };
    let keyword = call
        .query("keyword")
        .map(|k| k.trim().to_lowercase())
        .filter(|k| !k.is_empty());
    let state = sim.state();
    // An unknown enterprise has no employees.
    let Some(enterprise) = state.enterprises.get(call.path("enterpriseGlobalId")) else {
        return Ok(page(&[], page_num, page_size, Clone::clone));
    };
    // Only the page's own items are built: a page of a 100,000-employee enterprise costs
    // a slice (or, filtered, a pass over references), not 100,000 list items.
    if department.is_none() && keyword.is_none() {
        let ids: &[String] = &enterprise.members;
        return Ok(page(ids, page_num, page_size, |id| {
            list_item(&state, &state.members[id])
        }));
    }
    let matching: Vec<&Member> = enterprise
        .members
        .iter()
        .filter_map(|id| state.members.get(id))
        .filter(|m| department.is_none_or(|d| m.department == Some(d)))
        .filter(|m| {
            keyword.as_deref().is_none_or(|k| {
                m.name.to_lowercase().contains(k)
                    || m.user_name(&enterprise.code).to_lowercase().contains(k)
            })
        })
        .collect();
    Ok(page(&matching, page_num, page_size, |m| {
        list_item(&state, m)
    }))
}

pub(super) fn list_item(state: &State, member: &Member) -> m::MemberListItem {
    let enterprise = &state.enterprises[&member.enterprise];
    m::MemberListItem {
        id: member.id.to_string(),
        user_id: member.user_id.to_string(),
        global_id: member.global_id.clone(),
        enterprise_id: enterprise.id.to_string(),
        // The list item's department fields are not nullable: 0 and "" mean none.
        department_id: member.department.unwrap_or(0),
        department_name: member.department.map(department_name).unwrap_or_default(),
        user_name: member.user_name(&enterprise.code),
        password_mobile: member.mobile.clone().unwrap_or_default(),
        name: member.name.clone(),
        asset_nums: member.assets.iter().cloned().collect(),
        borrow_num: member.borrow.clone().unwrap_or_default(),
        online_flag: false,
        remark: member.remark.clone().unwrap_or_default(),
        deleted: false,
        update_time: member.updated,
        create_time: member.created,
        bound_user_info: Some(Value::Null),
    }
}

pub(super) fn to_i32(n: i64) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

/// Page `page_num` of `all`, each of its items made by `item` (only the page's are made),
/// with PageHelper's `PageInfo` semantics (`reasonable` off: a page past the end
/// is empty, not clamped), 8 navigation page numbers, made self-consistent on every page:
///
/// - `size` items from `startRow` to `endRow` (1-based, inclusive); both 0 when empty;
/// - `navigatepageNums` are real pages (1 to `pages`, empty when there are none), around
///   the current page or, past the end, the last ones; `firstPage`/`lastPage` are their
///   ends;
/// - `prePage` is the page before, or the last page when the current one is past the end
///   (PageHelper would name the page before, itself empty), 0 when there is none, and
///   `hasPreviousPage` is `prePage > 0`;
/// - `nextPage` is the page after while there is one, else 0, and `hasNextPage` is
///   `nextPage > 0`; `isLastPage` is its negation (no page follows; true past the end);
/// - `isFirstPage` is `pageNum == 1`.
pub(super) fn page<T>(
    all: &[T],
    page_num: i32,
    page_size: i32,
    item: impl Fn(&T) -> m::MemberListItem,
) -> m::MemberPage {
    let (num, size) = (i64::from(page_num), i64::from(page_size));
    let total = all.len() as i64;
    let pages = (total + size - 1) / size;
    let offset = (num - 1) * size;
    let list: Vec<_> = usize::try_from(offset)
        .ok()
        .and_then(|offset| all.get(offset..))
        .unwrap_or_default()
        .iter()
        .take(page_size as usize)
        .map(item)
        .collect();
    let on_page = list.len() as i64;
    let (start_row, end_row) = if on_page == 0 {
        (0, 0)
    } else {
        (offset + 1, offset + on_page)
    };
    let navigation = navigate(num.min(pages), pages);
    let pre_page = if num > pages {
        pages
    } else if num > 1 {
        num - 1
    } else {
        0
    };
    let next_page = if num < pages { num + 1 } else { 0 };
    m::MemberPage {
        page_num,
        page_size,
        size: to_i32(on_page),
        order_by: Some(Value::Null),
        start_row: to_i32(start_row),
        end_row: to_i32(end_row),
        total: to_i32(total),
        pages: to_i32(pages),
        list,
        first_page: navigation.first().copied().unwrap_or(0),
        pre_page: to_i32(pre_page),
        next_page: to_i32(next_page),
        last_page: navigation.last().copied().unwrap_or(0),
        is_first_page: num == 1,
        is_last_page: next_page == 0,
        has_previous_page: pre_page > 0,
        has_next_page: next_page > 0,
        navigate_pages: NAVIGATE_PAGES as i32,
        navigatepage_nums: navigation,
    }
}

/// PageHelper's navigation numbers: all pages when there are at most 8, otherwise 8
/// consecutive numbers around the current page, shifted to stay within the pages.
pub(super) fn navigate(page_num: i64, pages: i64) -> Vec<i32> {
    if pages <= NAVIGATE_PAGES {
        return (1..=pages).map(to_i32).collect();
    }
    let start = if page_num - NAVIGATE_PAGES / 2 < 1 {
        1
    } else if page_num + NAVIGATE_PAGES / 2 > pages {
        pages - NAVIGATE_PAGES + 1
    } else {
        page_num - NAVIGATE_PAGES / 2
    };
    (start..start + NAVIGATE_PAGES).map(to_i32).collect()
}

/// An enterprise the member center does not know has no licensing customer (`60017`).
pub(super) fn enterprise_assets<'s>(
    state: &'s State,
    call: &Call,
) -> Result<impl Iterator<Item = &'s Asset>, Failure> {
    let enterprise = call.path("enterpriseGlobalId");
    let Some(ent) = state.enterprises.get(enterprise) else {
        return Err(fail(
            E::NotBoundToLicensingCustomer,
            format!("enterprise {enterprise:?} is not bound to a licensing customer"),
        ));
    };
    Ok(ent.assets.iter().filter_map(|num| state.assets.get(num)))
}

/// Every active asset of the enterprise: its holder, and whether it takes part in a loan.
pub(crate) fn list_asset_nums(sim: &Db, call: &Call) -> Result<Vec<m::EnterpriseAsset>, Failure> {
    let state = sim.state();
    Ok(enterprise_assets(&state, call)?
        .map(|a| m::EnterpriseAsset {
            asset_num: a.num.clone(),
            asset_id: a.id.clone(),
            cloud_account_global_id: a.holder.clone(),
            borrowed_flag: a.lent_into.is_some() || state.loans.contains_key(&a.num),
            online_flag: false,
        })
        .collect())
}

/// The enterprise's lent locks (assets bought with `borrowedUsbKey`), with the employee
/// each is lent to.
pub(crate) fn list_lent_locks(sim: &Db, call: &Call) -> Result<Vec<m::LentLock>, Failure> {
    let state = sim.state();
    Ok(enterprise_assets(&state, call)?
        .filter(|a| a.lent_lock)
        .map(|a| {
            let loan = state.loans.get(&a.num);
            m::LentLock {
                asset_id: a.id.clone(),
                asset_num: a.num.clone(),
                borrowed_flag: loan.is_some(),
                cloud_account_global_id: loan.map(|l| l.member.clone()),
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(n: usize) -> Vec<m::MemberListItem> {
        let item: m::MemberListItem = serde_json::from_value(serde_json::json!({
            "id": "1", "userId": "2", "globalId": "MG", "enterpriseId": "3",
            "departmentId": 0, "departmentName": "", "userName": "a@b",
            "passwordMobile": "", "name": "A", "assetNums": [], "borrowNum": "",
            "onlineFlag": false, "remark": "", "deleted": false,
            "updateTime": 0, "createTime": 0
        }))
        .unwrap();
        vec![item; n]
    }

    #[test]
    fn page_helper_semantics() {
        let all = items(25);
        let p = page(&all, 2, 10, Clone::clone);
        assert_eq!(
            (p.size, p.start_row, p.end_row, p.total, p.pages),
            (10, 11, 20, 25, 3)
        );
        assert_eq!(
            (p.pre_page, p.next_page, p.first_page, p.last_page),
            (1, 3, 1, 3)
        );
        assert!(!p.is_first_page && !p.is_last_page && p.has_previous_page && p.has_next_page);
        assert_eq!(p.navigatepage_nums, [1, 2, 3]);

        let last = page(&all, 3, 10, Clone::clone);
        assert_eq!(
            (last.size, last.start_row, last.end_row, last.next_page),
            (5, 21, 25, 0)
        );
        assert!(last.is_last_page && !last.has_next_page);

        let past = page(&all, 9, 10, Clone::clone);
        assert_eq!((past.size, past.start_row, past.end_row), (0, 0, 0));
        assert!(past.is_last_page && !past.has_next_page && past.has_previous_page);
        assert_eq!(
            (
                past.pre_page,
                past.next_page,
                past.first_page,
                past.last_page
            ),
            (3, 0, 1, 3)
        );
        assert_eq!(past.navigatepage_nums, [1, 2, 3]);

        // Past the end of many pages: the navigation shows the last 8.
        let many = items(200);
        let far = page(&many, 1000, 10, Clone::clone);
        assert_eq!((far.pre_page, far.next_page, far.pages), (20, 0, 20));
        assert_eq!(far.navigatepage_nums, (13..=20).collect::<Vec<_>>());
        assert!(far.has_previous_page && far.is_last_page && !far.has_next_page);

        // No items at all, asked for a later page: nothing before, nothing after.
        let nothing = page(&[], 5, 10, Clone::clone);
        assert_eq!((nothing.pre_page, nothing.next_page), (0, 0));
        assert!(!nothing.has_previous_page && !nothing.has_next_page && nothing.is_last_page);

        let none = page(&[], 1, 10, Clone::clone);
        assert_eq!(
            (none.total, none.pages, none.first_page, none.last_page),
            (0, 0, 0, 0)
        );
        assert!(none.is_first_page && none.is_last_page);
        assert!(none.navigatepage_nums.is_empty());

        let huge = page(&all, i32::MAX, i32::MAX, Clone::clone);
        assert_eq!(huge.size, 0);
    }

    #[test]
    fn navigation_window() {
        assert_eq!(navigate(1, 20), [1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(navigate(10, 20), [6, 7, 8, 9, 10, 11, 12, 13]);
        assert_eq!(navigate(19, 20), [13, 14, 15, 16, 17, 18, 19, 20]);
        assert_eq!(navigate(2, 3), [1, 2, 3]);
    }
}
