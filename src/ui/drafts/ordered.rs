//! The ordered lists (treatment levels, visits): a checkbox per item and Move up/down buttons
//! that work as links before the wasm loads, keeping the focus on the moved item after it.

use leptos::prelude::*;

use crate::api::drafts::move_at;

/// An ordered list with a keep checkbox and move up/down buttons per item. Without wasm the
/// buttons send the form to the draft page, which applies the move.
#[component]
pub(super) fn OrderedList(
    id: String,
    list: RwSignal<Vec<(String, bool)>>,
    draft_href: StoredValue<String>,
) -> impl IntoView {
    let items = move || {
        list.get()
            .into_iter()
            .map(|(item, _)| item)
            .collect::<Vec<_>>()
    };
    view! {
        <ol class="ordered-list">
            <For each=items key=|item| item.clone() let:item>
                <OrderedItem id=id.clone() item list draft_href />
            </For>
        </ol>
    }
}

/// One item of an ordered list: keep it or not, move it up or down.
#[component]
pub(super) fn OrderedItem(
    id: String,
    item: String,
    list: RwSignal<Vec<(String, bool)>>,
    draft_href: StoredValue<String>,
) -> impl IntoView {
    let slug: String = item
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let keep_id = format!("keep-{id}-{slug}");
    let up_id = format!("up-{id}-{slug}");
    let down_id = format!("down-{id}-{slug}");
    let is_kept = {
        let item = item.clone();
        move || list.with(|l| l.iter().any(|(i, k)| *i == item && *k))
    };
    let initially = is_kept();
    let move_item = {
        let item = item.clone();
        move |up: bool, focus: String| {
            list.update(|l| {
                if let Some(at) = l.iter().position(|(i, _)| *i == item) {
                    move_at(l, at, up);
                }
            });
            refocus(focus);
        }
    };
    let (move_up, move_down) = (move_item.clone(), move_item);
    let (up_focus, down_focus) = (up_id.clone(), down_id.clone());
    let on_keep = {
        let item = item.clone();
        move |ev| {
            let on = event_target_checked(&ev);
            list.update(|l| {
                if let Some(entry) = l.iter_mut().find(|(i, _)| *i == item) {
                    entry.1 = on;
                }
            });
        }
    };
    view! {
        <li>
            <input
                type="checkbox"
                id=keep_id.clone()
                name=format!("answers[{id}][]")
                value=item.clone()
                checked=initially
                prop:checked=is_kept
                on:change=on_keep
            />
            <label for=keep_id>{item.clone()}</label>
            <span class="move-buttons">
                <MoveButton
                    id=up_id
                    value=format!("{id}:up:{item}")
                    label=format!("Move {item} up")
                    text="Up"
                    draft_href
                    on_move=move || move_up(true, up_focus.clone())
                />
                <MoveButton
                    id=down_id
                    value=format!("{id}:down:{item}")
                    label=format!("Move {item} down")
                    text="Down"
                    draft_href
                    on_move=move || move_down(false, down_focus.clone())
                />
            </span>
        </li>
    }
}

/// A move button: with wasm it moves the item in place; without, it sends the form to the
/// draft page (GET), which applies the move named by its value.
#[component]
pub(super) fn MoveButton(
    id: String,
    value: String,
    label: String,
    text: &'static str,
    draft_href: StoredValue<String>,
    on_move: impl Fn() + 'static,
) -> impl IntoView {
    view! {
        <button
            type="submit"
            id=id
            name="move"
            value=value
            formmethod="get"
            formaction=draft_href.get_value()
            aria-label=label
            on:click=move |ev| {
                ev.prevent_default();
                on_move();
            }
        >
            {text}
        </button>
    }
}

/// Keeps the keyboard where it was: a moved item's button gets the focus back after the list
/// is redrawn.
pub(super) fn refocus(element_id: String) {
    #[cfg(feature = "hydrate")]
    {
        use wasm_bindgen::JsCast;
        request_animation_frame(move || {
            if let Some(element) = web_sys::window()
                .and_then(|w| w.document())
                .and_then(|d| d.get_element_by_id(&element_id))
                .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
            {
                let _ = element.focus();
            }
        });
    }
    #[cfg(not(feature = "hydrate"))]
    let _ = element_id;
}
