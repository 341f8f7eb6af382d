//! Pagination of the lists the gateway serves.

use rmcp::model::PaginatedRequestParams;

use super::PAGE_SIZE;

/// One page of `items` (in name order) after the item whose key is `cursor`, and the
/// cursor of the next page: the key of the page's last item, so pages stay right while
/// items come and go.
pub(super) fn page<T>(
    items: Vec<T>,
    key: impl Fn(&T) -> &str,
    request: Option<&PaginatedRequestParams>,
) -> (Vec<T>, Option<String>) {
    let cursor = request.and_then(|params| params.cursor.as_deref());
    let start = cursor.map_or(0, |cursor| items.partition_point(|item| key(item) <= cursor));
    let mut rest: Vec<T> = items.into_iter().skip(start).collect();
    let next = (rest.len() > PAGE_SIZE).then(|| key(&rest[PAGE_SIZE - 1]).to_owned());
    rest.truncate(PAGE_SIZE);
    (rest, next)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n_items: usize) -> Vec<String> {
        (0..n_items).map(|item_idx| format!("t{item_idx:04}")).collect()
    }

    fn cursor(cursor: &str) -> PaginatedRequestParams {
        PaginatedRequestParams::default().with_cursor(Some(cursor.to_owned()))
    }

    #[test]
    fn pages_follow_the_last_name() {
        let (first, next) = page(names(450), String::as_str, None);
        assert_eq!((first.len(), first[0].as_str(), next.as_deref()), (PAGE_SIZE, "t0000", Some("t0199")));
        let (second, next) = page(names(450), String::as_str, Some(&cursor("t0199")));
        assert_eq!((second[0].as_str(), next.as_deref()), ("t0200", Some("t0399")));
        let (last, next) = page(names(450), String::as_str, Some(&cursor("t0399")));
        assert_eq!((last.len(), next), (50, None));
        let (exact, next) = page(names(PAGE_SIZE), String::as_str, None);
        assert_eq!((exact.len(), next), (PAGE_SIZE, None));
        // A cursor whose item went away still continues after where it sorted.
        let (after, _) = page(names(450), String::as_str, Some(&cursor("t0199x")));
        assert_eq!(after[0], "t0200");
    }
}
