/**
 * The client's request and response interfaces declare the fields the running service's OpenAPI
 * document does, no more and no fewer: a field the service adds shows up here as drift to type,
 * and one the client invents as a mistake. Read from the interfaces' source with the TypeScript
 * compiler's parser.
 */

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

import ts from "typescript";

import { MemoryClient } from "@agent-memory/client";

import { service } from "./support.js";

/** Each interface of `src/models.ts` and the OpenAPI schema it stands for. */
const SCHEMA_OF: Record<string, string> = {
  SourceSpan: "SourceSpan",
  Source: "Source",
  MemoryWrite: "MemoryWrite",
  MemoryNote: "ContentOnlyNote",
  RetrieveRequest: "RetrieveRequest",
  ResolutionSearchRequest: "ResolutionSearchRequest",
  Turn: "Turn",
  CloseSessionRequest: "CloseSessionRequest",
  ReviewDecision: "ReviewDecision",
  CloseCommitment: "CloseCommitment",
  ErasureRequest: "ErasureRequest",
  LegalHold: "LegalHold",
  PolicyChange: "PolicyChange",
  SourceView: "SourceView",
  MemoryRecord: "MemoryView",
  HistoryEntry: "HistoryEntry",
  MemoryDetail: "MemoryDetail",
  WriteResult: "WriteMemoryResponse",
  RetrievedMemory: "RetrievedMemory",
  LiveValue: "LiveValueView",
  WorkingItem: "WorkingItemView",
  RetrieveResult: "RetrieveResponse",
  Resolution: "ResolutionHit",
  ResolutionSearchResult: "ResolutionSearchResponse",
  SessionAccepted: "SessionAccepted",
  SessionStatus: "SessionStatus",
  ExtractedStatement: "ExtractedStatement",
  ExtractionReport: "ExtractionReport",
  MemoryPage: "MemoryPage",
  ReviewItem: "ReviewItem",
  ReviewPage: "ReviewPage",
  ReviewResult: "ReviewResult",
  CommitmentClosed: "CommitmentClosed",
  ErasureStep: "ErasureStepView",
  ErasureStatus: "ErasureStatus",
  AuditEvent: "AuditEventView",
  AuditPage: "AuditPage",
  SubjectHold: "SubjectHold",
  MemoryHold: "MemoryHold",
  PolicyView: "PolicyView",
  Health: "Health",
  WorkingSession: "WorkingSessionView",
  ForgetResult: "ForgetReply",
  LegalHoldView: "LegalHoldView",
  TombstoneCounts: "TombstoneCounts",
  ExportedMemory: "ExportedMemory",
  ExportedSession: "SessionView",
  ExportedErasure: "ErasureView",
  ExportedEvent: "EventView",
  ExportedWorkingValue: "WorkingView",
  SubjectExport: "SubjectExport",
};

/** Each interface's fields, its own and those it extends. */
function interfaceFields(): Map<string, Set<string>> {
  const path = new URL("../../src/models.ts", import.meta.url);
  const source = ts.createSourceFile("models.ts", readFileSync(path, "utf8"), ts.ScriptTarget.ES2022, true);
  const own = new Map<string, { fields: string[]; bases: string[] }>();
  source.forEachChild((node) => {
    if (!ts.isInterfaceDeclaration(node)) return;
    own.set(node.name.text, {
      fields: node.members.filter(ts.isPropertySignature).map((m) => m.name.getText(source)),
      bases: (node.heritageClauses ?? []).flatMap((h) => h.types.map((t) => t.expression.getText(source))),
    });
  });
  const all = (name: string): string[] => {
    const found = own.get(name);
    return found ? [...found.fields, ...found.bases.flatMap(all)] : [];
  };
  return new Map([...own.keys()].map((name) => [name, new Set(all(name))]));
}

test("the interfaces declare exactly the fields of the service's schemas", async () => {
  // Given the running service's schemas, and the client's interfaces
  const doc = (await new MemoryClient(service.url).openapi()) as { components: { schemas: Record<string, { properties?: object }> } };
  const declared = interfaceFields();
  // When each interface is compared with its schema
  const drift: string[] = [];
  for (const [name, schemaName] of Object.entries(SCHEMA_OF)) {
    const schema = doc.components.schemas[schemaName];
    assert.ok(schema, `no schema ${schemaName} in the OpenAPI document`);
    const served = new Set(Object.keys(schema.properties ?? {}));
    const typed = declared.get(name);
    assert.ok(typed, `no interface ${name} in models.ts`);
    for (const field of served) if (!typed.has(field)) drift.push(`${name} lacks ${schemaName}.${field}`);
    for (const field of typed) if (!served.has(field)) drift.push(`${name}.${field} is not in ${schemaName}`);
  }
  // Then none differs
  assert.deepEqual(drift, []);
});
