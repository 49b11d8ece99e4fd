import { answerRest } from "@/server/http/api-routes";

export const dynamic = "force-dynamic";

export {
  answerRest as GET,
  answerRest as POST,
  answerRest as PUT,
  answerRest as PATCH,
  answerRest as DELETE,
};
