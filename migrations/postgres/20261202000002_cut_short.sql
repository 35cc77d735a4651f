-- A block whose reasoning the reader cut short with "Answer now" (it reads "(cut short)" after a
-- reload too). Expand only.
ALTER TABLE thinking_blocks ADD COLUMN cut_short INTEGER NOT NULL DEFAULT 0;
