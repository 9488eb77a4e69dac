//! The platform documents' own words that the checks rest on, verbatim: a check cites the
//! sentence (or table row) it tests, so that a departure can be read against the text.
//! Nothing is asserted where the documents are silent: a refusal the order service gives
//! no code for is checked for its shape and for a documented code, not for one code.

use licensing_sdk::operations::Service;

/// A document's file name and a sentence or table row of it.
pub type Quote = (&'static str, &'static str);

const ORDER: &str = "order-service.md";
const MEMBER: &str = "member-center.md";

/// The sentences every check of a service shares.
pub struct ServiceQuotes {
    /// What HTTP 200 and 299 mean.
    pub status: Quote,
    /// What a success carries.
    pub success: Quote,
    /// An error reply's shape.
    pub error_shape: Quote,
    /// The credentials every request carries.
    pub auth: Quote,
    /// `g_nonce`.
    pub nonce: Quote,
}

/// The sentences of `service`'s document.
pub fn of(service: Service) -> ServiceQuotes {
    match service {
        Service::Order => ServiceQuotes {
            status: (
                ORDER,
                "HTTP status: 200 means the request was processed and the business `code` gives the result; 299 means a business exception.",
            ),
            success: (
                ORDER,
                "| code | integer `0` on success; string on error | business result code |",
            ),
            error_shape: (
                ORDER,
                "An error reply has the form: `code` (string), `message`, `cause`.",
            ),
            auth: (
                ORDER,
                "Header `Authorization`: required, `Bearer <APP_ACCESS_TOKEN>` (application-level token).",
            ),
            nonce: (
                ORDER,
                "Query `g_nonce`: required string, random string against replay.",
            ),
        },
        Service::Member => ServiceQuotes {
            status: (
                MEMBER,
                "HTTP 200: processed, read the business `code`; HTTP 299: business exception.",
            ),
            success: (
                MEMBER,
                "`code` (integer `0` on success; string on error), `message` (`success` on success), `data` (object, array or null), `cause` (string, error replies only).",
            ),
            error_shape: (
                MEMBER,
                "HTTP 299 is a business exception; error reply shape is `{code (string), message, cause}`.",
            ),
            auth: (
                MEMBER,
                "Every request carries three headers: `Authorization: Bearer <CLIENT_TOKEN>`, `clientToken` (application-level token, client_credentials grant from application key and secret) and `userToken` (user-level token, password grant).",
            ),
            nonce: (
                MEMBER,
                "Every endpoint takes query `g_nonce` (required string, anti-replay random string).",
            ),
        },
    }
}

/// `Content-Type` on the order service: every endpoint, GETs included.
pub const ORDER_CONTENT_TYPE: Quote = (
    ORDER,
    "Header `Content-Type`: required, `application/json` (documented for every endpoint).",
);
/// `Content-Type` on the member center: only where there is a body.
pub const MEMBER_CONTENT_TYPE: Quote = (
    MEMBER,
    "| Content-Type | yes on endpoints with a body | `application/json` |",
);
/// The paging parameters.
pub const PAGE_QUERY: Quote = (
    MEMBER,
    "Query: `departmentId` (long, optional), `keyword` (string, optional, employee name or account), `pageNum` (integer, required, page number), `pageSize` (integer, required, items per page).",
);
/// The page object's count.
pub const PAGE_SIZE_FIELD: Quote = (
    MEMBER,
    "`pageNum`, `pageSize`, `size` (items on this page), `orderBy` (nullable), `startRow`, `endRow`, `total`, `pages`, `list` (array of employee list item), `firstPage`, `prePage`, `nextPage`, `lastPage` (all integers), `isFirstPage`, `isLastPage`, `hasPreviousPage`, `hasNextPage` (booleans), `navigatePages` (integer), `navigatepageNums` (array of integers).",
);
/// The state change of a lock.
pub const LOCK_TRANSITIONS: Quote = (
    ORDER,
    "| Physical lock | disable operation (`/asset/lock`) | lock exists and is a refillable lock or big-customer lock | disabled | item status 1 |",
);
/// A lock result item's statuses.
pub const LOCK_STATUSES: Quote = (
    ORDER,
    "`assetNum` (string), `status` (integer): 1 success, 2 lock does not exist, 3 operation failed, 4 wrong lock type.",
);
/// A lock that does not exist.
pub const LOCK_NOT_FOUND: Quote = (
    ORDER,
    "For a lock that does not exist the item status is 2; for a wrong lock type it is 4; for a failed operation it is 3.",
);
/// Where a lock's state is read.
pub const ASSET_LOCKED: Quote = (ORDER, "| locked | boolean | whether locked |");
/// Asset numbers.
pub const SHELL_NUMBERS: Quote = (
    ORDER,
    "Reply `data`: array of strings, each a numeric string of exactly 10 digits. The first digit is the region marker (8 = domestic, 6 = Singapore); the remaining 9 digits are an increasing sequence.",
);
/// Adding an employee.
pub const MEMBER_ADD: Quote = (
    MEMBER,
    "| Employee | add (endpoint 1) | valid item | employee created; failing items are reported in `failed` |",
);
/// What adding answers.
pub const MEMBER_ADD_REPLY: Quote = (
    MEMBER,
    "Reply `data`: `succeeded` (array of employee record), `failed` (array of failed item). When some fail, code `60027` is returned and both lists are in `data`.",
);
/// Deleting an employee.
pub const MEMBER_DELETE: Quote = (
    MEMBER,
    "| Employee | delete (endpoint 4) | employee found | employee removed from the enterprise |",
);
/// Editing an employee.
pub const MEMBER_EDIT: Quote = (
    MEMBER,
    "Reply `data`: null. Editable: name, department id, remark, security mobile.",
);

const APP_TOKEN_ROW: Quote = (
    MEMBER,
    "| 60000 | application token invalid, expired or lacking resource permission | all |",
);
const USER_TOKEN_ROW: Quote = (MEMBER, "| 60005 | invalid user login token | all |");

/// The code the documents give for a wrong value of `header`: the member center's
/// application token (both its copies) and user token have one; the order service
/// documents none.
pub fn credential_code(service: Service, header: &str) -> Option<&'static str> {
    match service {
        Service::Order => None,
        Service::Member if header.eq_ignore_ascii_case("userToken") => Some("60005"),
        Service::Member if header.eq_ignore_ascii_case("clientToken") => Some("60000"),
        // The bearer carries the same application token as `clientToken`; which code a
        // mismatch between the two copies answers is not shown.
        Service::Member => None,
    }
}

/// The error table's row of `code`.
pub fn code_row(code: &str) -> Option<Quote> {
    match code {
        "60000" => Some(APP_TOKEN_ROW),
        "60005" => Some(USER_TOKEN_ROW),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each quote is one line of its document: no line break, no stray edit marks.
    #[test]
    fn quotes_are_single_lines_of_their_document() {
        let mut all = vec![
            ORDER_CONTENT_TYPE,
            MEMBER_CONTENT_TYPE,
            PAGE_QUERY,
            PAGE_SIZE_FIELD,
            LOCK_TRANSITIONS,
            LOCK_STATUSES,
            LOCK_NOT_FOUND,
            ASSET_LOCKED,
            SHELL_NUMBERS,
            MEMBER_ADD,
            MEMBER_ADD_REPLY,
            MEMBER_DELETE,
            MEMBER_EDIT,
            APP_TOKEN_ROW,
            USER_TOKEN_ROW,
        ];
        for service in [Service::Order, Service::Member] {
            let q = of(service);
            all.extend([q.status, q.success, q.error_shape, q.auth, q.nonce]);
        }
        for (document, quote) in all {
            assert!([ORDER, MEMBER].contains(&document));
            assert!(!quote.contains('\n') && quote.trim() == quote, "{quote}");
        }
        assert_eq!(credential_code(Service::Member, "usertoken"), Some("60005"));
        assert_eq!(credential_code(Service::Order, "Authorization"), None);
    }
}
