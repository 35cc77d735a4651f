-- Rich answers: the tools the model used inside a turn and the sources its answer cites, kept
-- with the answer version as one JSON document ({"tools":[…],"sources":[…]}); read and written
-- whole with the version, never queried by their parts. NULL: neither.
ALTER TABLE message_versions ADD COLUMN extras TEXT;
