//! Request bodies as the server reads them: any bytes into every JSON endpoint's arguments and
//! into `/api/chat`'s body (with the bounded message count the server reads on a failed parse).
//! No panic and no stack overflow whatever the nesting (serde_json's depth limit; unread fields
//! are skipped without recursion), and what parses serializes and parses again.
#![no_main]

use libfuzzer_sys::fuzz_target;

macro_rules! every_body {
    ($data:expr, $($ty:ty),+ $(,)?) => {
        $(
            if let Ok(parsed) = serde_json::from_slice::<$ty>($data) {
                let again = serde_json::to_vec(&parsed).expect("what parsed serializes");
                assert!(
                    serde_json::from_slice::<$ty>(&again).is_ok(),
                    "{} does not read back what it wrote",
                    stringify!($ty)
                );
            }
        )+
    };
}

fuzz_target!(|data: &[u8]| {
    every_body!(
        data,
        ponder::domain::ChatRequest,
        ponder::api::account::WhoAmI,
        ponder::api::account::SetUp,
        ponder::api::account::SignIn,
        ponder::api::account::SignOut,
        ponder::api::account::SignOutEverywhere,
        ponder::api::account::ListUsers,
        ponder::api::account::AddUser,
        ponder::api::account::RemoveUser,
        ponder::api::account::ListTokens,
        ponder::api::account::CreateToken,
        ponder::api::account::RevokeToken,
        ponder::api::history::ListWorkspaces,
        ponder::api::history::CreateWorkspace,
        ponder::api::history::RenameWorkspace,
        ponder::api::history::ListConversations,
        ponder::api::history::GetConversation,
        ponder::api::history::RenameConversation,
        ponder::api::history::DeleteConversation,
        ponder::api::history::RestoreConversation,
        ponder::api::history::BlockText,
        ponder::api::history::SetBlockOpen,
        ponder::api::history::SetBlockOpenAt,
        ponder::api::history::BranchConversation,
        ponder::api::history::ExportConversation,
        ponder::api::history::SetActiveVersion,
        ponder::api::history::Search,
        ponder::api::history::ImportConversation,
        ponder::api::history::GetPreferences,
        ponder::api::history::SetPreferences,
        ponder::api::models::ListModels,
        ponder::api::rich::RenderMath,
        ponder::api::rich::RenderCode,
        ponder::api::turn::StopTurn,
        ponder::api::turn::AnswerNow,
    );
    let _ = serde_json::from_slice::<ponder::domain::message::MessageCount>(data);
});
