//! What each key does to the chat. Decided without I/O: what needs the server comes back as
//! [`Effect`]s, so every key is tested in-process.

use std::time::{Duration, Instant};

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::app::{words, Chat, Effect};

impl Chat {
    /// Applies `key` to the chat; what it asks of the server is returned.
    pub fn on_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl && key.code == KeyCode::Char('c') {
            if self
                .quit_armed
                .is_some_and(|t| t.elapsed() < Duration::from_secs(3))
            {
                self.quit = true;
                return Vec::new();
            }
            let effects = self.stop();
            self.quit_armed = Some(Instant::now());
            self.status = words().quit_again.into();
            return effects;
        }
        self.quit_armed = None;
        if self.picker.is_some() {
            return self.on_picker_key(key);
        }
        match (key.code, ctrl) {
            (KeyCode::Esc, _) => {
                if self.is_running() {
                    return self.stop();
                }
                self.input.clear();
                self.cursor = 0;
            }
            (KeyCode::Enter, _) => return self.send(),
            (KeyCode::Tab, _) | (KeyCode::Char('o'), true) => {
                let mode = self.mode.toggled();
                self.set_mode(mode);
                self.status = format!("{} mode", mode.key());
            }
            (KeyCode::Char('r'), true) => return self.retry(),
            (KeyCode::Char('n'), true) => return self.new_chat(),
            (KeyCode::Char('p'), true) => {
                if self.stored {
                    return vec![Effect::ListChats];
                }
                self.status = words().browser_history.into();
            }
            (KeyCode::Char('d'), true) if self.input.is_empty() => self.quit = true,
            (KeyCode::Up, _) => self.back += 1,
            (KeyCode::Down, _) => self.back = self.back.saturating_sub(1),
            (KeyCode::PageUp, _) => self.back += 10,
            (KeyCode::PageDown, _) => self.back = self.back.saturating_sub(10),
            (KeyCode::End, true) => self.back = 0,
            (KeyCode::Left, _) => self.cursor = self.cursor.saturating_sub(1),
            (KeyCode::Right, _) => self.cursor = (self.cursor + 1).min(self.input.len()),
            (KeyCode::Home, _) | (KeyCode::Char('a'), true) => self.cursor = 0,
            (KeyCode::End, _) | (KeyCode::Char('e'), true) => self.cursor = self.input.len(),
            (KeyCode::Backspace, _) if self.cursor > 0 => {
                self.cursor -= 1;
                self.input.remove(self.cursor);
            }
            (KeyCode::Delete, _) if self.cursor < self.input.len() => {
                self.input.remove(self.cursor);
            }
            (KeyCode::Char('u'), true) => {
                self.input.drain(..self.cursor);
                self.cursor = 0;
            }
            (KeyCode::Char(c), false) => {
                self.input.insert(self.cursor, c);
                self.cursor += 1;
            }
            _ => {}
        }
        Vec::new()
    }

    fn on_picker_key(&mut self, key: KeyEvent) -> Vec<Effect> {
        let Some(picker) = &mut self.picker else {
            return Vec::new();
        };
        let count = picker.list.len();
        let at = picker.state.selected().unwrap_or(0);
        match key.code {
            KeyCode::Esc => self.picker = None,
            KeyCode::Up => picker.state.select(Some(at.saturating_sub(1))),
            KeyCode::Down => picker
                .state
                .select(Some((at + 1).min(count.saturating_sub(1)))),
            KeyCode::Enter => {
                let chosen = picker.list.get(at).map(|c| c.id.clone());
                self.picker = None;
                if let Some(id) = chosen {
                    let mut effects = self.detach();
                    effects.push(Effect::Open(id));
                    return effects;
                }
            }
            _ => {}
        }
        Vec::new()
    }
}
