use super::*;
use crate::sources::source_error::Refusal;

const FLOWS: &[Setting] = &[Setting {
    flag: "flow",
    commands: &[Command::History, Command::Thread],
    help: "the flow whose session it is",
}];

#[test]
fn a_declared_setting_passes_and_others_are_refused_with_what_it_takes() {
    let given = SourceOptions::default().with("flow", Some("Support"));
    assert!(given.check("Langflow", FLOWS, Command::History).is_ok());

    let err = given
        .check("Langflow", FLOWS, Command::Conversations)
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "--flow is not taken by `conversations` on a Langflow database (it takes no setting of its own)"
    );
    assert!(matches!(
        err,
        SourceError::Refused {
            kind: Refusal::Usage,
            ..
        }
    ));

    let two = SourceOptions::default()
        .with("leaf", Some("1ef"))
        .with_switch("include-deleted", true)
        .with_switch("app", false);
    let err = two.check("Langflow", FLOWS, Command::Thread).unwrap_err();
    assert_eq!(
        err.to_string(),
        "--include-deleted, --leaf are not taken by `thread` on a Langflow database (it takes --flow)"
    );
}

#[test]
fn numbers_are_read_or_refused_by_their_flag() {
    let given = SourceOptions::default()
        .with("n-messages", Some(12))
        .with("message-limit", Some("ten"));
    assert_eq!(given.number::<u32>("n-messages").unwrap(), Some(12));
    assert_eq!(given.number::<u32>("absent").unwrap(), None);
    let err = given.number::<i64>("message-limit").unwrap_err();
    assert_eq!(err.to_string(), "--message-limit takes a number, not `ten`");
}

#[test]
fn only_the_flags_a_command_takes_are_handed_to_it() {
    let named = SourceOptions::default()
        .with("flow", Some("Support"))
        .with("agent", Some("coordinator"));
    let thread = named.clone().taken_by(FLOWS, Command::Thread);
    assert_eq!(
        thread,
        SourceOptions::default().with("flow", Some("Support"))
    );
    assert!(thread.check("Langflow", FLOWS, Command::Thread).is_ok());
    assert_eq!(
        named.taken_by(FLOWS, Command::Conversations),
        SourceOptions::default()
    );
}
